"""Settings for every test: hypothesis without its per-example deadline.

The deadline is a wall-clock limit (200 ms by default); on the shared 2-core machine a loaded moment
fails a correct example (tests never assert wall-clock times, docs/architecture.md's guide).
"""

from hypothesis import settings

settings.register_profile("corral", deadline=None)
settings.load_profile("corral")
