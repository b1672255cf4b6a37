"""The test suite, one folder per part of the course: isolation/, pipeline/, course/, book/ (and tools), plus the layout test."""
