"""Building reference chains by multi-model consensus, with a validator gate and regeneration.

The library comes first; ``crystal references build`` / ``regenerate`` are thin shells.

- :func:`build_consensus` / :func:`consensus_from_embeddings` (:mod:`.consensus`, pure):
  candidate chains and an encoder (or embeddings) in, one chain with per-step provenance
  (support, models, the cluster's member steps, the medoid) out;
- :func:`build_references` (:mod:`.build`): an item set in, ``DIR/benchmark.jsonl``
  (loadable by ``crystal score``), journals, ``summary.json`` and the construction report
  out; rounds of generation, consensus and validation, resumable after a kill;
- :func:`regenerate_references`: send items back (e.g. rejected in human review);
- :class:`ReferencesConfig` (:mod:`.config`): every setting, from YAML and flags;
- :class:`ReferencesBuild` / :class:`ReferencesRegenerate` (:mod:`.jobs`): what the two
  commands do, a config plus endpoints given as ``NAME=URL`` (:func:`build_from_job`,
  :func:`regenerate_from_job`).

::

    from crystalbench.references import build_references, load_references_config

    config = load_references_config(overrides={
        "items": "data/items",
        "generators": [{"name": "qwen", "base_urls": ["http://localhost:8000/v1"]},
                       {"name": "gemma", "base_urls": ["http://localhost:8001/v1"]}],
        "validator": {"name": "molmo", "base_urls": ["http://localhost:8002/v1"]},
    })
    result = build_references(config, "refs/")

Layout: :mod:`.consensus` and :mod:`.ordering` (pure), :mod:`.generation` (prompts, seeds,
reading outputs), :mod:`.validator` (verdicts), :mod:`.records` (journals), :mod:`.engine`
(local engine), :mod:`.consensus_run` (batched consensus), :mod:`.ray_engine` (Ray),
:mod:`.pipeline` (rounds and journals), :mod:`.output`, :mod:`.report` and :mod:`.build`
(the run). See ``docs/references.md``.
"""

from __future__ import annotations

from crystalbench.references.build import build_references, read_ids_file, regenerate_references
from crystalbench.references.config import (
    ModelEndpoint,
    RayOptions,
    ReferencesConfig,
    load_references_config,
)
from crystalbench.references.consensus import (
    CandidateChain,
    ConsensusChain,
    StepProvenance,
    StepRef,
    build_consensus,
    consensus_from_embeddings,
)
from crystalbench.references.jobs import (
    ReferencesBuild,
    ReferencesRegenerate,
    build_from_job,
    regenerate_from_job,
)
from crystalbench.references.pipeline import BuildResult

__all__ = [
    "BuildResult",
    "CandidateChain",
    "ConsensusChain",
    "ModelEndpoint",
    "RayOptions",
    "ReferencesBuild",
    "ReferencesConfig",
    "ReferencesRegenerate",
    "StepProvenance",
    "StepRef",
    "build_consensus",
    "build_from_job",
    "build_references",
    "consensus_from_embeddings",
    "load_references_config",
    "read_ids_file",
    "regenerate_from_job",
    "regenerate_references",
]
