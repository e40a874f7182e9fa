import pytest

from tests.deploy.containers import build_image


@pytest.fixture(scope="session")
def image() -> str:
    """The image ``make image`` builds, once per run."""
    return build_image()
