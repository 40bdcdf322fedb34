"""The run path: registry -> tests expanded at each level -> every text encoded once -> the method -> one
run record -> the store (``runner``), and a sweep of one configuration over many models, here or on Ray
(``sweep``)."""
from .runner import Phase, RunConfig, RunOutcome, check_config, default_tests, evaluate, package_versions, run

__all__ = ["Phase", "RunConfig", "RunOutcome", "check_config", "default_tests", "evaluate", "package_versions", "run"]
