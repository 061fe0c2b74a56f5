import pytest
@pytest.mark.drill
def test_x(request):
    print(request.config.getoption("--run-slow-drills"))
