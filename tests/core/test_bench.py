"""`yarn-drf bench core`: its digest tells decisions apart, and its queue files decide as written."""
from __future__ import annotations

import random

from scheduler.bench import SIZES, app_user, queue_yaml, run_size
from scheduler.config import parse_config


def test_the_digest_is_the_same_for_the_same_run_and_differs_for_another_seed():
    runs = [run_size(100, (2, 2, 3), 60, 200, seed, users=4) for seed in (1, 1, 2)]
    assert runs[0].containers > 0 and runs[0].digest == runs[1].digest != runs[2].digest


def test_leaves_naming_only_the_users_of_their_apps_weigh_those_users_as_naming_them_all():
    apps, tree = SIZES[1]
    users = 100
    every, paths = queue_yaml(tree, random.Random(1), users)
    own, own_paths = queue_yaml(tree, random.Random(1), users, apps)
    assert paths == own_paths and len(own) < len(every) / 5
    named, listed = parse_config(every).queues(), parse_config(own).queues()
    assert {p: q.weight for p, q in named.items()} == {p: q.weight for p, q in listed.items()}
    for a in range(apps):
        leaf, user = paths[a % len(paths)], f"user{app_user(a, len(paths), users)}"
        assert user in listed[leaf].user_limits.users
        assert listed[leaf].user_limits.of(user) == named[leaf].user_limits.of(user)
