"""yarn-drf's decision core: weighted Dominant Resource Fairness over YARN resource types."""
from scheduler import compiled

MODE = compiled.select(__path__)  # before the modules it may replace are imported
from scheduler.config import ConfigError, QueueConfig, load_config, parse_config
from scheduler.core import SchedulerCore
from scheduler.model import Assignment, Placement
from scheduler.policies import POLICIES
from scheduler.resources import ResourceTypes

__all__ = ["Assignment", "ConfigError", "MODE", "POLICIES", "Placement", "QueueConfig", "ResourceTypes",
           "SchedulerCore", "load_config", "parse_config"]
