def pytest_addoption(parser):
    parser.addoption("--run-slow-drills", action="store_true")
