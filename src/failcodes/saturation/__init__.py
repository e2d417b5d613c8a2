"""Human-in-the-loop saturation: grow a codebook until new data brings nothing new.

Seed 001's loop: code a fresh batch with the current codebook, let a proposer suggest patterns
the codebook does not cover, let a person accept, merge, rename or reject them, write the next
codebook version, and stop after K consecutive rounds with no accepted new pattern. Everything
lives in a project folder (:mod:`.store`) so the loop survives restarts and changes of hands.
"""

from failcodes.saturation.changes import Change, ChangeOp
from failcodes.saturation.coders import Coder, ScriptedCoder
from failcodes.saturation.dedupe import deduplicate, similarity
from failcodes.saturation.models import (
    AccumulationPoint,
    Action,
    Decision,
    ProjectConfig,
    Proposal,
    ProposalDraft,
    ProposalStatus,
    PruneAction,
    PruneCandidate,
    RecodeFlag,
    RoundPhase,
    RoundRecord,
    StopState,
)
from failcodes.saturation.proposers import (
    LLMProposer,
    OfflineProposer,
    Proposer,
    ProposerError,
    ScriptedProposer,
    TextModel,
)
from failcodes.saturation.prune import apply_prune_file, leaf_support, prune_candidates
from failcodes.saturation.review import auto_accept, parse_review_file, write_review_file
from failcodes.saturation.rounds import (
    accumulation,
    close_round,
    draw_batch,
    init_project,
    record_decisions,
    run_round,
    stop_state,
)
from failcodes.saturation.store import ProjectStore, SaturationError

__all__ = [
    "AccumulationPoint",
    "Action",
    "Change",
    "ChangeOp",
    "Coder",
    "Decision",
    "LLMProposer",
    "OfflineProposer",
    "ProjectConfig",
    "ProjectStore",
    "Proposal",
    "ProposalDraft",
    "ProposalStatus",
    "Proposer",
    "ProposerError",
    "PruneAction",
    "PruneCandidate",
    "RecodeFlag",
    "RoundPhase",
    "RoundRecord",
    "SaturationError",
    "ScriptedCoder",
    "ScriptedProposer",
    "StopState",
    "TextModel",
    "accumulation",
    "apply_prune_file",
    "auto_accept",
    "close_round",
    "deduplicate",
    "draw_batch",
    "init_project",
    "leaf_support",
    "parse_review_file",
    "prune_candidates",
    "record_decisions",
    "run_round",
    "similarity",
    "stop_state",
    "write_review_file",
]
