"""``serve-rewards --warm`` says how many reference steps came from the cache (issue 30: a
warm start from the cache said "embedded 0 reference steps")."""

from __future__ import annotations

from crystalbench.rewards.server_config import RewardServerConfig


def test_a_second_warm_start_says_its_steps_came_from_the_cache(tmp_path):
    config = RewardServerConfig(
        encoder="minilm-offline", warm="sample", cache_dir=str(tmp_path / "cache")
    )
    notes: list[str] = []
    config.build_scorer(on_note=notes.append)
    (cold,) = [note for note in notes if note.startswith("warmed")]
    total = int(cold.split()[1].replace(",", ""))
    assert total > 0
    head = f"warmed {total:,} reference steps of sample:"
    assert cold == f"{head} {total:,} encoded, 0 from the cache"
    notes.clear()
    config.build_scorer(on_note=notes.append)
    (warm,) = [note for note in notes if note.startswith("warmed")]
    assert warm == f"{head} 0 encoded, {total:,} from the cache"
