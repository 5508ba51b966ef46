"""The query-log report publishes no input statistic that neighbours subtract into a user.

Two logs one user apart gave reports differing by the number of distinct queries only that
user typed (``info.intents.n_queries``) and by the size of a cluster the release suppressed
whole (``cluster_size_counts``); these figures are not in the published log.
"""

import json
from collections import Counter

from querylogs import anonymize


def _report(release) -> dict:
    return json.loads(json.dumps(release.to_dict()))


def test_cluster_sizes_are_the_published_groups(h, small_log):
    release = anonymize(small_log, 3, seed=0, key=h.KEY, measures=False)
    recount = Counter(h.groups_of_identical_rows(release.data).values())
    info = _report(release)["info"]
    assert {int(s): c for s, c in info["cluster_size_counts"].items()} == dict(recount)
    published_users = release.data["user"].nunique()
    assert sum(int(s) * c for s, c in info["cluster_size_counts"].items()) == published_users
    assert (
        sum(info["cluster_size_counts"].values()) + info["clusters_without_published_queries"]
        == info["n_clusters"]
    )


def test_intent_statistics_stay_in_python(h, small_log):
    one_less = small_log[small_log["user"] != small_log["user"].iloc[0]]
    reports = []
    for log in (small_log, one_less):
        release = anonymize(log, 3, seed=0, key=h.KEY, measures=False)
        assert release.info["intents"]["n_queries"] > 0  # kept for the publisher
        report = _report(release)
        assert "intents" not in report["info"] and "intents" in report["withheld"]
        text = json.dumps(report)
        assert "largest_intent" not in text and "singleton_intents" not in text
        reports.append(release)
    # the withheld figure does differ between the neighbours: withholding it matters
    assert reports[0].info["intents"] != reports[1].info["intents"]
