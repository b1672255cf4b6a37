"""The grading service as a JupyterHub service: the hub's OAuth says who the caller is, so a
student copies no token. The hub user name is the student id (it must be a student of the
gradebook); hub admins, and members of the instructors' group, are instructors.

The hub starts the service (``c.JupyterHub.services``, README "The grading service under
JupyterHub") with ``JUPYTERHUB_API_TOKEN``, ``JUPYTERHUB_SERVICE_PREFIX``, ``JUPYTERHUB_CLIENT_ID``,
``JUPYTERHUB_OAUTH_CALLBACK_URL`` and the hub's API address in its environment; :func:`from_environment`
sees them. The login is OAuth's authorization code flow with PKCE, done by jupyterhub's own
``HubOAuth`` (``jupyterhub.services.auth``), which this module drives from FastAPI:

    PREFIX/oauth_login?next=PATH   a random state in a cookie, then to the hub's authorize page
    PREFIX/oauth_callback          the hub sends the browser back with a code: the state is checked,
                                   the code exchanged for the user's hub token, kept in an HttpOnly
                                   cookie (path PREFIX), and the browser goes on to PATH

Each later request without ``Authorization: Bearer`` is identified by that cookie: the hub answers
who owns the token (``HubOAuth.user_for_token``, cached a minute) and with which scopes; only a token
that grants access to this service is taken (:meth:`HubLogin.check_scope`). Tokens issued with
``python -m autograder token`` keep working beside it.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from fastapi import FastAPI, Request
from fastapi.responses import RedirectResponse
from tornado.web import HTTPError  # what jupyterhub's HubAuth raises when the hub refuses a request

from . import classlist, store
from .uploads import Refused

STATE_COOKIE = "autograder-oauth-state"


def from_environment(engine, instructor_group: str = "instructors") -> "HubLogin | None":
    """The hub login when the hub started this process (its API token is in the environment), else None."""
    if not os.environ.get("JUPYTERHUB_API_TOKEN") or not os.environ.get("JUPYTERHUB_SERVICE_PREFIX"):
        return None
    from jupyterhub.services.auth import HubOAuth

    return HubLogin(HubOAuth(api_token=os.environ["JUPYTERHUB_API_TOKEN"], cache_max_age=60), engine, instructor_group)


@dataclass
class HubLogin:
    auth: object  # jupyterhub.services.auth.HubOAuth
    engine: object
    instructor_group: str = "instructors"

    @property
    def prefix(self) -> str:
        """The service's path behind the hub's proxy, e.g. ``/services/grading/`` (ends with /)."""
        return self.auth.base_url

    def login_path(self) -> str:
        return f"{self.prefix}oauth_login"

    def caller(self, request: Request) -> store.Caller:
        """Who sent this request, by their hub cookie; refused (401) without one, 403 when the hub
        user is neither an instructor nor a student of the gradebook."""
        token = request.cookies.get(self.auth.cookie_name, "")
        model = self.auth.user_for_token(token, sync=True) if token else None
        if model is None:
            raise Refused(401, f"not logged in: open {self.login_path()} to log in through JupyterHub "
                               f"(or send 'Authorization: Bearer TOKEN')", {"WWW-Authenticate": "Bearer"})
        self.check_scope(model)
        return self.caller_of(model)

    def check_scope(self, model: dict) -> None:
        """Only a hub token that grants access to this service opens it (the one its OAuth login
        gives, whose scopes include ``access:services!service=NAME``), never any other token of the
        same user (a server's, one made for another service or with narrower scopes)."""
        required = self.auth.access_scopes
        if not required or not self.auth.check_scopes(required, model):
            wanted = ", ".join(sorted(required)) or "access to this service (the hub named none: is it started as a hub service?)"
            raise Refused(403, f"this hub token does not open the grading service: it lacks {wanted}; "
                               f"log in at {self.login_path()}")

    def caller_of(self, model: dict) -> store.Caller:
        name = model["name"]
        if model.get("admin") or self.instructor_group in (model.get("groups") or ()):
            return store.Caller(name, "instructor")
        if not classlist.is_student(self.engine, name):
            raise Refused(403, f"the hub user {name!r} is not a student of this course's gradebook: ask your instructor "
                               f"to add you (nbgrader db student add {name})")
        return store.Caller(name, "student")

    def install(self, app: FastAPI) -> None:
        """The two OAuth routes, under the service's own paths (the prefix is the app's root_path)."""
        secure = os.environ.get("JUPYTERHUB_PUBLIC_URL", "").startswith("https")

        @app.get("/oauth_login", include_in_schema=False)
        def oauth_login(next: str = ""):
            verifier, challenge, method = self.auth.generate_pkce_code_challenge()
            state = self.auth.generate_state(_local(next, self.prefix), code_verifier=verifier)
            url = f"{self.auth.login_url}&state={state}&code_challenge={challenge}&code_challenge_method={method}"
            reply = RedirectResponse(url, status_code=302)
            reply.set_cookie(STATE_COOKIE, state, max_age=600, path=self.prefix, httponly=True, secure=secure, samesite="lax")
            return reply

        @app.get("/oauth_callback", include_in_schema=False)
        async def oauth_callback(request: Request, code: str = "", state: str = "", error: str = ""):
            if error:
                raise Refused(400, f"the hub refused the login: {request.query_params.get('error_description', error)}")
            if not code or not state or state != request.cookies.get(STATE_COOKIE):
                raise Refused(403, f"this login does not match the one this browser started: log in again at {self.login_path()}")
            next_path, verifier = self.auth.get_next_url(state), self.auth.get_code_verifier(state)
            self.auth.clear_oauth_state(state)
            try:
                token = await self.auth.token_for_code(code, code_verifier=verifier, sync=False)
            except HTTPError as exc:
                raise Refused(403, f"the hub did not take this login's code ({exc.log_message or exc}): log in again at "
                                   f"{self.login_path()}") from None
            if await self.auth.user_for_token(token, sync=False) is None:
                raise Refused(500, "the hub gave a token that identifies nobody: log in again")
            reply = RedirectResponse(next_path, status_code=302)
            reply.delete_cookie(STATE_COOKIE, path=self.prefix)
            reply.set_cookie(self.auth.cookie_name, token, path=self.prefix, httponly=True, secure=secure, samesite="lax")
            return reply


def _local(next_path: str, prefix: str) -> str:
    """Only a path of this service is a place to go after the login (no open redirect)."""
    return next_path if next_path.startswith(prefix) else prefix
