"""A local fake of the OpenAI and Anthropic HTTP APIs for tests and benchmarks (127.0.0.1)."""

from tests.fakeserver.app import FakeState, build_app
from tests.fakeserver.server import FakeServer

__all__ = ["FakeServer", "FakeState", "build_app"]
