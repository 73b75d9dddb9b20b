from tests.plugins.capture.pulse import pulse  # noqa: F401 - the fixture, for every test here
