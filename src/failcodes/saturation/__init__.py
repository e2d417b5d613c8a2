"""Human-in-the-loop saturation: grow a codebook until new data brings nothing new.

Seed 001's loop: code a fresh batch with the current codebook, let a proposer suggest patterns
the codebook does not cover, let a person accept, merge, rename or reject them, write the next
codebook version, and stop after K consecutive rounds with no accepted new pattern. Everything
lives in a project folder (:mod:`.store`) so the loop survives restarts and changes of hands.
"""

from failcodes.saturation.changes import Change as Change
from failcodes.saturation.changes import ChangeOp as ChangeOp
from failcodes.saturation.coders import Coder as Coder
from failcodes.saturation.coders import ScriptedCoder as ScriptedCoder
from failcodes.saturation.dedupe import deduplicate as deduplicate
from failcodes.saturation.dedupe import similarity as similarity
from failcodes.saturation.models import AccumulationPoint as AccumulationPoint
from failcodes.saturation.models import Action as Action
from failcodes.saturation.models import Decision as Decision
from failcodes.saturation.models import ProjectConfig as ProjectConfig
from failcodes.saturation.models import Proposal as Proposal
from failcodes.saturation.models import ProposalDraft as ProposalDraft
from failcodes.saturation.models import ProposalStatus as ProposalStatus
from failcodes.saturation.models import PruneAction as PruneAction
from failcodes.saturation.models import PruneCandidate as PruneCandidate
from failcodes.saturation.models import RecodeFlag as RecodeFlag
from failcodes.saturation.models import RoundPhase as RoundPhase
from failcodes.saturation.models import RoundRecord as RoundRecord
from failcodes.saturation.models import StopState as StopState
from failcodes.saturation.proposers import LLMProposer as LLMProposer
from failcodes.saturation.proposers import OfflineProposer as OfflineProposer
from failcodes.saturation.proposers import Proposer as Proposer
from failcodes.saturation.proposers import ProposerError as ProposerError
from failcodes.saturation.proposers import ScriptedProposer as ScriptedProposer
from failcodes.saturation.proposers import TextModel as TextModel
from failcodes.saturation.prune import apply_prune_file as apply_prune_file
from failcodes.saturation.prune import leaf_support as leaf_support
from failcodes.saturation.prune import prune_candidates as prune_candidates
from failcodes.saturation.review import auto_accept as auto_accept
from failcodes.saturation.review import parse_review_file as parse_review_file
from failcodes.saturation.review import write_review_file as write_review_file
from failcodes.saturation.rounds import accumulation as accumulation
from failcodes.saturation.rounds import close_round as close_round
from failcodes.saturation.rounds import draw_batch as draw_batch
from failcodes.saturation.rounds import init_project as init_project
from failcodes.saturation.rounds import record_decisions as record_decisions
from failcodes.saturation.rounds import run_round as run_round
from failcodes.saturation.rounds import stop_state as stop_state
from failcodes.saturation.store import ProjectStore as ProjectStore
from failcodes.saturation.store import SaturationError as SaturationError
