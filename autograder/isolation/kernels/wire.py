"""The wire format between the grader and a sandboxed student kernel.

Both sides import this file: the grader as ``autograder.isolation.kernels.wire``, the kernel
runner as a plain module copied into the sandbox (so it must only import the
standard library at module level). Frames are an 8-byte length followed by
UTF-8 JSON; a reply's first key is the id of its request. Values are plain data
only, never pickles:

* ``None``, ``bool``, ``int``, ``float``, ``str`` and ``list`` are JSON values;
* everything else is a tagged object ``{"$": tag, ...}``: tuples, dicts and
  OrderedDicts (as key/value pairs, so keys keep their types), tensors (dtype, shape,
  strides, device and the raw bytes they span, so layout travels as the sender made it),
  NumPy arrays and scalars, ``torch.Size``/``dtype``/``device``, sets, bytes, complex numbers;
* any other object stays in the kernel and crosses the wire as an opaque
  handle ``{"$": "obj", "h": id, "type": "module.QualName"}``.

The grader reads what a kernel sends with a budget of work, not only of bytes
(a lying kernel must not be able to make the grader slow or large):

* :func:`reply_id_matches` checks a reply's id in its first bytes (the kernel writes
  it first), so a frame out of turn is refused unparsed;
* :func:`scan_frame` counts the JSON values and the nesting depth of a frame in one
  linear pass over its bytes, before ``json.loads`` builds anything;
* :func:`decode` never hashes a value whose hash the student can choose (sets and
  dict keys other than strings and small integers come back as :class:`Unhashed`,
  a list in the order the kernel sent it), and stops at a deadline.

A lying or broken kernel can only produce wrong data or a :class:`WireError`,
never run code in the grader.
"""
from __future__ import annotations

import base64
import collections
import math
import time

MAX_DEPTH = 64
DTYPES = (
    "float16", "bfloat16", "float32", "float64", "complex64", "complex128",
    "uint8", "int8", "int16", "int32", "int64", "bool", "uint16", "uint32", "uint64",
)
NP_KINDS = set("biufc?")  # numpy dtype kinds we rebuild: no objects, strings or voids


try:  # the grader: autograder.isolation.kernels.wire
    from .frames import HEADER, FrameReader, WireError, parse_frame, reply_id_matches, scan_frame, write_frame  # noqa: F401
except ImportError:  # inside the sandbox: a plain module next to frames.py
    from frames import HEADER, FrameReader, WireError, parse_frame, reply_id_matches, scan_frame, write_frame  # noqa: F401


# --------------------------------------------------------------------------- values
def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _unb64(text) -> bytes:
    if not isinstance(text, str):
        raise WireError("binary data is not a string")
    try:
        return base64.b64decode(text.encode("ascii"), validate=True)
    except (ValueError, UnicodeEncodeError) as exc:
        raise WireError(f"bad binary data: {exc}") from None


def _span(shape, stride) -> int:
    """Elements of memory a strided view reaches, from its first element to its last."""
    if any(d == 0 for d in shape):
        return 0
    return 1 + sum((d - 1) * s for d, s in zip(shape, stride))


def tensor_payload(torch, tensor) -> dict:
    """Raw description of a strided tensor: dtype, shape, strides, device, bytes.

    The bytes are the memory the view spans, so the other side rebuilds the same layout
    (a transposed or sliced input stays non-contiguous, an expanded one keeps its zero
    strides): a check that sends a non-contiguous tensor must reach the student's code
    as one, as it does under plain nbgrader. A view that spans far more memory than it
    shows (a sparse slice of a large tensor) is compacted first, keeping its dimension order.
    """
    t = tensor.detach()
    if t.device.type == "meta":  # no data: a device probe (a stand-in for a GPU the grader lacks)
        return {"dtype": str(t.dtype).replace("torch.", ""), "shape": list(t.shape), "stride": list(t.stride()),
                "device": "meta", "rg": bool(tensor.requires_grad), "data": ""}
    cpu = t.to("cpu")
    if cpu.is_complex():
        cpu = cpu.resolve_conj()
    cpu = cpu.resolve_neg()
    if _span(cpu.shape, cpu.stride()) > 2 * cpu.numel() + 64:
        cpu = cpu.clone()  # preserve_format: dense, in the same dimension order where it can be
    span = _span(cpu.shape, cpu.stride())
    flat = cpu.as_strided((span,), (1,), cpu.storage_offset())
    raw = flat.view(torch.uint8).numpy().tobytes() if span else b""
    return {
        "dtype": str(t.dtype).replace("torch.", ""),
        "shape": list(t.shape),
        "stride": list(cpu.stride()),
        "device": t.device.type,
        "rg": bool(tensor.requires_grad),
        "data": _b64(raw),
    }


def encodable_tensor(torch, value) -> bool:
    t = value
    try:
        return (
            t.layout == torch.strided
            and not t.is_quantized
            and not getattr(t, "is_nested", False)
            and t.device.type in ("cpu", "cuda", "mps", "meta")
            and str(t.dtype).replace("torch.", "") in DTYPES
        )
    except Exception:  # noqa: BLE001 - anything odd stays a handle
        return False


def encode(value, *, handle=None, ref=None, torch=None, numpy=None, depth: int = 0):
    """Encode a value. ``handle(obj) -> int`` keeps objects that are not data
    (kernel side); without it such objects raise :class:`WireError` (grader side).
    ``ref(obj) -> int | None`` names objects the other side already holds (the
    grader's proxies for student objects). ``type(x) is ...`` everywhere:
    subclasses of builtins are not data."""
    if depth > MAX_DEPTH:
        raise WireError("value nested too deeply")
    t = type(value)
    if value is None or t is bool or t is int or t is str:
        return value
    if ref is not None:
        h = ref(value)
        if h is not None:
            return {"$": "ref", "h": h}
    if t is float:
        return value if math.isfinite(value) else {"$": "float", "v": repr(value)}
    if t is list:
        return [encode(v, handle=handle, ref=ref, torch=torch, numpy=numpy, depth=depth + 1) for v in value]
    if t is tuple:
        return {"$": "tuple", "items": [encode(v, handle=handle, ref=ref, torch=torch, numpy=numpy, depth=depth + 1) for v in value]}
    if t is dict:
        return {
            "$": "dict",
            "items": [
                [encode(k, handle=handle, ref=ref, torch=torch, numpy=numpy, depth=depth + 1), encode(v, handle=handle, ref=ref, torch=torch, numpy=numpy, depth=depth + 1)]
                for k, v in value.items()
            ],
        }
    if t is collections.OrderedDict:  # e.g. a module's state_dict()
        return {
            "$": "odict",
            "items": [
                [encode(k, handle=handle, ref=ref, torch=torch, numpy=numpy, depth=depth + 1), encode(v, handle=handle, ref=ref, torch=torch, numpy=numpy, depth=depth + 1)]
                for k, v in value.items()
            ],
        }
    if t in (set, frozenset):
        return {"$": t.__name__, "items": [encode(v, handle=handle, ref=ref, torch=torch, numpy=numpy, depth=depth + 1) for v in value]}
    if t is bytes:
        return {"$": "bytes", "data": _b64(value)}
    if t is complex:
        return {"$": "complex", "re": repr(value.real), "im": repr(value.imag)}
    if torch is not None:
        if (t is torch.Tensor or t is torch.nn.Parameter) and encodable_tensor(torch, value):
            out = {"$": "tensor", **tensor_payload(torch, value), "param": t is torch.nn.Parameter}
            if handle is not None:
                out["h"] = handle(value)
            return out
        if t is torch.Size:
            return {"$": "size", "items": [int(v) for v in value]}
        if t is torch.dtype:
            return {"$": "dtype", "name": str(value).replace("torch.", "")}
        if t is torch.device:
            return {"$": "device", "name": str(value)}
    if numpy is not None:
        if t is numpy.ndarray and value.dtype.kind in NP_KINDS and not value.dtype.hasobject:
            arr = numpy.ascontiguousarray(value)
            return {"$": "ndarray", "dtype": arr.dtype.str, "shape": list(arr.shape), "data": _b64(arr.tobytes())}
        if isinstance(value, numpy.generic) and t.__module__ == "numpy" and value.dtype.kind in NP_KINDS:
            return {"$": "npscalar", "dtype": value.dtype.str, "data": _b64(value.tobytes())}
    if handle is None and torch is not None:
        # grader side: two library objects a check may hand to student code, sent as
        # the data that rebuilds them (never a student object: those travel as handles)
        if t is torch.Generator:
            state = value.get_state()
            return {"$": "generator", "device": str(value.device), "state": _b64(bytes(state.tolist()))}
        if t is torch.nn.MultiheadAttention and _plain_mha(value):
            p = value.in_proj_weight
            return {
                "$": "mha", "embed_dim": value.embed_dim, "num_heads": value.num_heads,
                "bias": value.in_proj_bias is not None, "batch_first": bool(value.batch_first),
                "dtype": str(p.dtype).replace("torch.", ""), "device": str(p.device), "training": bool(value.training),
                "state": encode(value.state_dict(), torch=torch, numpy=numpy, depth=depth + 1),
            }
    if handle is None:
        raise WireError(f"cannot send a {t.__module__}.{t.__qualname__} as data")
    module = torch is not None and isinstance(value, torch.nn.Module)
    return {"$": "obj", "h": handle(value), "type": f"{t.__module__}.{t.__qualname__}", "module": bool(module)}


def _plain_mha(m) -> bool:
    """An nn.MultiheadAttention that its constructor arguments and state_dict rebuild exactly."""
    return bool(m._qkv_same_embed_dim) and m.bias_k is None and m.bias_v is None and not m.add_zero_attn and m.dropout == 0.0


def _decode_generator(value: dict, torch):
    device = value.get("device")
    if device not in ("cpu",) and not (type(device) is str and device.startswith("cuda") and len(device) <= 10):
        raise WireError("bad generator device")
    state = _unb64(value.get("state"))
    if len(state) > 1 << 16:
        raise WireError("generator state too large")
    gen = torch.Generator(device=device)
    try:
        gen.set_state(torch.tensor(list(state), dtype=torch.uint8))
    except RuntimeError:
        raise WireError("bad generator state") from None
    return gen


def _decode_mha(value: dict, state, torch):
    dims = [value.get(k) for k in ("embed_dim", "num_heads")]
    if any(type(v) is not int or not 0 < v <= 4096 for v in dims) or dims[0] % dims[1]:
        raise WireError("bad MultiheadAttention size")
    dtype, device = value.get("dtype"), value.get("device")
    if dtype not in DTYPES or type(device) is not str or len(device) > 10:
        raise WireError("bad MultiheadAttention dtype or device")
    try:
        ref = torch.nn.MultiheadAttention(dims[0], dims[1], bias=bool(value.get("bias")), batch_first=bool(value.get("batch_first")),
                                          device=device, dtype=getattr(torch, dtype))
        ref.load_state_dict(state)
    except (RuntimeError, TypeError, ValueError) as exc:
        raise WireError(f"bad MultiheadAttention: {exc}") from None
    return ref.train(bool(value.get("training")))


def _int(v, what: str) -> int:
    if type(v) is not int:
        raise WireError(f"{what} is not an integer")
    return v


def _float(v) -> float:
    if type(v) is not str or len(v) > 40:
        raise WireError("float is not a short string")
    try:
        return float(v)
    except ValueError:
        raise WireError(f"bad float {v!r}") from None


MAX_EXTENT = 1 << 62  # a dimension or stride beyond this is no honest tensor's


def _dims(obj: dict, key: str) -> list[int]:
    """A shape or stride list: at most 32 non-negative integers below MAX_EXTENT."""
    value = obj.get(key)
    if type(value) is not list or len(value) > 32:
        raise WireError(f"bad {key}")
    dims = [_int(d, f"{key} entry") for d in value]
    if any(not 0 <= d < MAX_EXTENT for d in dims):
        raise WireError(f"{key} entry out of range")
    return dims


def decode_tensor(obj: dict, torch, device_ok=None):
    """A fresh tensor built by this process from a tensor payload, with the sender's
    strides (contiguous when the payload names none)."""
    name = obj.get("dtype")
    if name not in DTYPES or not hasattr(torch, name):
        raise WireError(f"unsupported dtype {name!r}")
    dtype = getattr(torch, name)
    dims = _dims(obj, "shape")
    if "stride" in obj:
        strides = _dims(obj, "stride")
        if len(strides) != len(dims):
            raise WireError("stride and shape differ in length")
    else:
        strides = [math.prod(dims[i + 1 :]) for i in range(len(dims))]
    span = _span(dims, strides)
    if obj.get("device") == "meta":  # shape, strides and dtype only: nothing is allocated
        if obj.get("data") not in ("", None):
            raise WireError("a meta tensor carries no data")
        tensor = torch.empty_strided(dims, strides, dtype=dtype, device="meta")
        if obj.get("rg") is True and (tensor.is_floating_point() or tensor.is_complex()):
            tensor.requires_grad_(True)
        return torch.nn.Parameter(tensor, requires_grad=bool(obj.get("rg"))) if obj.get("param") is True else tensor
    itemsize = torch.empty((), dtype=dtype).element_size()
    raw = _unb64(obj.get("data"))
    if len(raw) != span * itemsize:  # checked before any allocation the sender sized
        raise WireError(f"tensor data has {len(raw)} bytes, shape {dims} stride {strides} {name} needs {span * itemsize}")
    flat = torch.frombuffer(bytearray(raw), dtype=torch.uint8).view(dtype).clone() if span else torch.empty(0, dtype=dtype)
    device = obj.get("device", "cpu")
    if device != "cpu":
        if device_ok is None or not device_ok(device):
            raise WireError(f"tensor on device {device!r}, which this process does not have")
        flat = flat.to(device)
    tensor = torch.empty(0, dtype=dtype, device=flat.device).set_(flat.untyped_storage(), 0, dims, strides)
    if obj.get("rg") is True and (tensor.is_floating_point() or tensor.is_complex()):
        tensor.requires_grad_(True)
    if obj.get("param") is True:
        tensor = torch.nn.Parameter(tensor, requires_grad=bool(obj.get("rg")))
    return tensor


class Unhashed:
    """A set or dict from a kernel whose members' hashes the student could choose.

    Strings and bytes hash with this process's random key, and integers below 2**61 hash
    to themselves, so a student cannot make many of them share a hash; anything else (large
    integers, floats, tuples...) can be made to collide, and a set of colliding values costs
    quadratic time to build, holding the GIL. So the grader never builds one: it keeps the
    members as a list, in the order the kernel sent them. ``kind`` is the container it stands
    for ("set", "frozenset", "dict", "odict"); ``items`` its members, or (key, value) pairs.
    """

    __slots__ = ("kind", "items")

    def __init__(self, kind: str, items: list):
        self.kind, self.items = kind, items

    def __len__(self) -> int:
        return len(self.items)

    def __repr__(self) -> str:
        return f"<a {self.kind} of {len(self.items)} members the grader did not hash>"


HASH_SAFE_INT = (1 << 61) - 2  # |n| up to this: hash(n) == n (bar -1), distinct for distinct n


def hash_safe(value) -> bool:
    """Whether a student cannot choose many values of this kind with one hash."""
    t = type(value)
    if t is str or t is bytes or t is bool or value is None:
        return True
    return t is int and -HASH_SAFE_INT <= value <= HASH_SAFE_INT


def _unhashable(value) -> bool:
    """Decoded data that no set or dict could hold (found without hashing it)."""
    t = type(value)
    if t is tuple:
        return any(_unhashable(v) for v in value)
    return t in (list, dict, set, collections.OrderedDict, Unhashed)


def decode(value, *, torch=None, numpy=None, resolve=None, on_tensor=None, device_ok=None, hashing: bool = False,
           deadline: float | None = None, depth: int = 0):
    """Rebuild a value from its wire form.

    ``resolve(tag_dict)`` turns ``obj``/``ref`` tags into objects (a handle proxy
    on the grader side, the real object on the kernel side); ``on_tensor(tensor,
    tag_dict)`` sees every rebuilt tensor (the grader records where it came from).
    ``hashing=True`` rebuilds every set and dict as such (the kernel side, where the values
    are the grader's); by default members a student could make collide come back as
    :class:`Unhashed`. Past ``deadline`` (``time.monotonic()``) decoding stops with a WireError.
    """
    if depth > MAX_DEPTH:
        raise WireError("value nested too deeply")
    kw = dict(torch=torch, numpy=numpy, resolve=resolve, on_tensor=on_tensor, device_ok=device_ok, hashing=hashing,
              deadline=deadline, depth=depth + 1)
    t = type(value)
    if value is None or t in (bool, int, float, str):
        return value
    if deadline is not None and time.monotonic() > deadline:
        raise WireError("decoding the reply took longer than its deadline")
    if t is list:
        return [decode(v, **kw) for v in value]
    if t is not dict:
        raise WireError(f"unexpected JSON value of type {t.__name__}")
    tag = value.get("$")
    if tag == "float":
        return _float(value.get("v"))
    if tag == "tuple":
        return tuple(decode(v, **kw) for v in _items(value))
    if tag in ("dict", "odict"):
        return _decode_mapping(value, tag, kw)
    if tag in ("set", "frozenset"):
        return _decode_members(value, tag, kw)
    if tag == "bytes":
        return _unb64(value.get("data"))
    if tag == "complex":
        return complex(_float(value.get("re")), _float(value.get("im")))
    if tag in _TORCH_TAGS:
        if torch is None:
            raise WireError(f"{tag} without torch")
        return _decode_torch(value, tag, kw)
    if tag in ("ndarray", "npscalar"):
        if numpy is None:
            raise WireError("array without numpy")
        return _decode_numpy(value, tag, numpy)
    if tag in ("obj", "ref"):
        if resolve is None:
            raise WireError(f"unexpected {tag}")
        return resolve(value)
    raise WireError(f"unknown tag {tag!r}")


def _decode_mapping(value: dict, tag: str, kw: dict):
    pairs = []
    for pair in _items(value):
        if type(pair) is not list or len(pair) != 2:
            raise WireError("bad dict item")
        pairs.append((decode(pair[0], **kw), decode(pair[1], **kw)))
    if any(_unhashable(k) for k, _ in pairs):
        raise WireError("unhashable dict key")
    if not kw["hashing"] and not all(hash_safe(k) for k, _ in pairs):
        return Unhashed(tag, pairs)
    try:
        return dict(pairs) if tag == "dict" else collections.OrderedDict(pairs)
    except TypeError:
        raise WireError("unhashable dict key") from None


def _decode_members(value: dict, tag: str, kw: dict):
    items = [decode(v, **kw) for v in _items(value)]
    if any(_unhashable(v) for v in items):
        raise WireError("unhashable set item")
    if not kw["hashing"] and not all(hash_safe(v) for v in items):
        return Unhashed(tag, items)
    try:
        return set(items) if tag == "set" else frozenset(items)
    except TypeError:
        raise WireError("unhashable set item") from None


_TORCH_TAGS = ("tensor", "generator", "mha", "size", "dtype", "device")


def _decode_torch(value: dict, tag: str, kw: dict):
    torch = kw["torch"]
    if tag == "tensor":
        tensor = decode_tensor(value, torch, kw["device_ok"])
        if kw["on_tensor"] is not None:
            kw["on_tensor"](tensor, value)
        return tensor
    if tag == "generator":
        return _decode_generator(value, torch)
    if tag == "mha":
        return _decode_mha(value, decode(value.get("state"), **kw), torch)
    if tag == "size":
        return torch.Size([_int(v, "size entry") for v in _items(value)])
    name = value.get("name")
    if tag == "dtype":
        if name not in DTYPES or not hasattr(torch, name):
            raise WireError(f"unsupported dtype {name!r}")
        return getattr(torch, name)
    if type(name) is not str or len(name) > 20:
        raise WireError("bad device")
    try:
        return torch.device(name)
    except RuntimeError:
        raise WireError(f"bad device {name!r}") from None


def _decode_numpy(value: dict, tag: str, numpy):
    dtype_str = value.get("dtype")
    if type(dtype_str) is not str or len(dtype_str) > 8:
        raise WireError("bad numpy dtype")
    try:
        dtype = numpy.dtype(dtype_str)
    except TypeError:
        raise WireError(f"bad numpy dtype {dtype_str!r}") from None
    if dtype.kind not in NP_KINDS or dtype.hasobject:
        raise WireError(f"unsupported numpy dtype {dtype_str!r}")
    raw = _unb64(value.get("data"))
    if tag == "npscalar":
        if len(raw) != dtype.itemsize:
            raise WireError("bad numpy scalar")
        return numpy.frombuffer(raw, dtype=dtype)[0]
    shape = value.get("shape")
    if type(shape) is not list or len(shape) > 32:
        raise WireError("bad shape")
    dims = [_int(d, "shape entry") for d in shape]
    if any(d < 0 for d in dims) or len(raw) != math.prod(dims) * dtype.itemsize:
        raise WireError("array data does not match its shape")
    return numpy.frombuffer(raw, dtype=dtype).reshape(dims).copy()


def _items(value: dict) -> list:
    items = value.get("items")
    if type(items) is not list:
        raise WireError("bad items")
    return items
