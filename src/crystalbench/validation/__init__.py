"""Evaluator validation: pair sampling, human agreement, the encoder ablation, a judge matcher.

- :func:`sample_pairs` / :func:`write_pairs` / :func:`read_pairs`: step pairs for people to
  label, stratified by cosine band (``crystal validate sample-pairs``);
- :func:`read_labels`: the review app's export or plain CSV / JSONL labels;
- :func:`compute_agreement`: agreement, Cohen's kappa, Krippendorff's alpha, the best tau,
  calibration (``crystal validate agreement``);
- :func:`run_ablation`: every model in every encoder x threshold cell (``crystal validate
  ablate``);
- :class:`SamplePairsConfig` / :class:`AgreementConfig` / :class:`AblationConfig` and
  :func:`draw_pairs` / :func:`measure_agreement` / :func:`ablate`: the three commands as a
  config and one function each (:mod:`.jobs`);
- :class:`OpenAIStepJudge` / :class:`JudgeMatcher`: the judge matcher
  (``crystal score --matcher judge``).

Only light modules load with this package; statsmodels, scipy, krippendorff and the openai
client load when a function needs them.
"""

from __future__ import annotations

from crystalbench.judges.step_judge import (
    JudgeMatcher,
    OpenAIStepJudge,
    StepJudge,
    StepMatchVerdict,
    judge_pair_decisions,
)
from crystalbench.validation.ablation import AblationReport, parse_encoders, run_ablation
from crystalbench.validation.agreement import (
    AgreementReport,
    cohen_kappa,
    compute_agreement,
    cosine_decisions,
    wilson_interval,
)
from crystalbench.validation.bands import band_labels, parse_bands
from crystalbench.validation.candidates import best_unmatched
from crystalbench.validation.jobs import (
    AblationConfig,
    AgreementConfig,
    SamplePairsConfig,
    ablate,
    draw_pairs,
    measure_agreement,
)
from crystalbench.validation.labels import LabelSet, read_decisions, read_labels
from crystalbench.validation.pairs import (
    PairSample,
    StepPair,
    read_pairs,
    sample_pairs,
    write_pairs,
)
from crystalbench.validation.render import write_ablation, write_agreement
from crystalbench.validation.thresholds import chain_at

__all__ = [
    "AblationConfig",
    "AblationReport",
    "AgreementConfig",
    "AgreementReport",
    "JudgeMatcher",
    "LabelSet",
    "OpenAIStepJudge",
    "PairSample",
    "SamplePairsConfig",
    "StepJudge",
    "StepMatchVerdict",
    "StepPair",
    "ablate",
    "band_labels",
    "best_unmatched",
    "chain_at",
    "cohen_kappa",
    "compute_agreement",
    "cosine_decisions",
    "draw_pairs",
    "judge_pair_decisions",
    "measure_agreement",
    "parse_bands",
    "parse_encoders",
    "read_decisions",
    "read_labels",
    "read_pairs",
    "run_ablation",
    "sample_pairs",
    "wilson_interval",
    "write_ablation",
    "write_agreement",
    "write_pairs",
]
