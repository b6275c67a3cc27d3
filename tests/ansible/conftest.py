from tests.emulators.pytest_plugin import emulator_fleet  # noqa: F401
