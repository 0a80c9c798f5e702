"""Turn calibration rows into engine calls with a measured answer, or say why a row cannot be.

A `Case` is one measured figure and a function that predicts it from an `EfficiencyTable`, so the
same cases serve fitting, the accuracy report and held-out checks. Rows the engine cannot express
become `Skipped` with the reason; nothing is guessed to make a row fit.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from wheretorun.calibration.catalog import mpt_model, resolve_gpu, resolve_model
from wheretorun.calibration.data import Row, read_rows
from wheretorun.engine import (
    EfficiencyTable,
    InferenceConfig,
    InferenceEstimate,
    InvalidSpec,
    ModelArchitecture,
    Precision,
    ServingEngine,
    TrainingConfig,
    estimate_inference,
    estimate_training,
    weights_bytes,
)
from wheretorun.engine.efficiency import serving_family
from wheretorun.engine.specs import AcceleratorSpec

__all__ = ["Case", "Metric", "Skipped", "build_cases"]


class Metric(StrEnum):
    WEIGHTS_GB = "weights memory (GB)"
    DECODE_BATCH1 = "batch-1 decode (tok/s)"
    HIGH_BATCH = "high-batch throughput (tok/s)"
    TTFT = "TTFT (ms)"
    TRAINING_HOURS = "training accelerator-hours"
    WHOLE_RUN_HOURS = "whole-run accelerator-hours"


@dataclass(frozen=True)
class Case:
    row_id: str
    metric: Metric
    measured: float
    predict: Callable[[EfficiencyTable], float] = field(repr=False, compare=False)
    model: str
    gpu: str
    group: str  # which efficiency entry the row informs, e.g. "llama.cpp/gddr" or "training"
    assumptions: tuple[str, ...] = ()
    fitted: bool = True  # False: evaluation only (e.g. run totals that include failures)
    # a serving row's accelerator family and memory kind, "hopper/hbm" (`EfficiencyTable.serving_families`)
    family: str = ""


@dataclass(frozen=True)
class Skipped:
    row_id: str
    reason: str


CaseOrSkip = Case | Skipped

# ---- parsing helpers ----------------------------------------------------------------------------

_ENGINES = {
    "llama.cpp": ServingEngine.LLAMA_CPP,
    "llama.cpp (Metal)": ServingEngine.LLAMA_CPP,
    "TensorRT-LLM": ServingEngine.TENSORRT_LLM,
    "TensorRT-LLM (SUT TRT)": ServingEngine.TENSORRT_LLM,
    "NVIDIA NIM (TRT-LLM backend)": ServingEngine.TENSORRT_LLM,
}

_INFERENCE_PRECISIONS = {
    "GGUF Q4_K_M": Precision.GGUF_Q4_K_M,
    "GGUF F16": Precision.GGUF_F16,
    "GGUF Q4_0": Precision.GGUF_Q4_0,
    "GGUF Q8_0": Precision.GGUF_Q8_0,
    "FP8": Precision.FP8,
    "FP16": Precision.FP16,
    "FP4 (NVFP4)": Precision.FP4,
}

_WEIGHT_FORMATS = [
    ("GGUF Q4_K_M", Precision.GGUF_Q4_K_M),
    ("GGUF Q5_K_M", Precision.GGUF_Q5_K_M),
    ("GGUF Q4_1", Precision.GGUF_Q4_1),
    ("GGUF F16", Precision.GGUF_F16),
    ("GPTQ 4-bit, group size None", Precision.GPTQ_INT4_NO_GROUP),
    ("GPTQ 4-bit, no group", Precision.GPTQ_INT4_NO_GROUP),
    ("GPTQ 4-bit, group size 64", Precision.GPTQ_INT4_G64),
    ("GPTQ 4-bit, group size 32", Precision.GPTQ_INT4_G32),
    ("FP16", Precision.FP16),
    ("BF16", Precision.BF16),
    ("FP8", Precision.FP8),
]


def _number(cell: str) -> float | None:
    match = re.match(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*$", cell)
    return float(match.group(1)) if match else None


def _tokens(cell: str) -> float | None:
    """'2.0T', '15T+', '~15T', '14.8T', '150B (30B-token dataset)' -> tokens."""
    match = re.search(r"([0-9]+(?:\.[0-9]+)?)\s*([TB])", cell)
    if not match:
        return None
    return float(match.group(1)) * (1e12 if match.group(2) == "T" else 1e9)


def _base_name(model_cell: str) -> str:
    return model_cell.split(" (")[0].strip()


# ---- weights memory -----------------------------------------------------------------------------


def _weight_case(row: Row) -> CaseOrSkip:
    rid = row["id"]
    if "derived" in row["figure_type"]:
        return Skipped(rid, "third-party estimator output, not a measurement")
    if not row["what"].startswith(("weights on disk", "model file", "quantized weights", "gptq_model")):
        tested = any(word in row["what"].lower() for word in ("finetun", "training"))
        where = "; the bound is checked in tests/unit/test_engine_training.py" if tested else ""
        return Skipped(rid, f"not a weights size ({row['what']}){where}")
    measured = _number(row["value_gb_decimal"])
    if measured is None:
        return Skipped(rid, "no decimal-GB value (unit ambiguous in the source)")
    fmt = next((p for prefix, p in _WEIGHT_FORMATS if row["precision_or_format"].startswith(prefix)), None)
    if fmt is None:
        return Skipped(rid, f"format {row['precision_or_format']!r} is not modelled")
    model = resolve_model(row["model"])
    if model is None:
        return Skipped(rid, f"{row['model']} is not in models.csv")
    assumptions: tuple[str, ...] = ()
    if "MTP" in row["model"]:
        assumptions = ("file includes DeepSeek's 14B multi-token-prediction module; the model spec is 671B",)

    def predict(_table: EfficiencyTable, m: ModelArchitecture = model, p: Precision = fmt) -> float:
        return weights_bytes(m, p) / 1e9

    return Case(rid, Metric.WEIGHTS_GB, measured, predict, model.name, "", "weights", assumptions)


# ---- inference ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Setup:
    model: ModelArchitecture
    gpu: AcceleratorSpec
    engine: ServingEngine
    precision: Precision
    count: int
    tensor_parallel: int
    pipeline_parallel: int
    kv_cache_precision: Precision
    assumptions: tuple[str, ...]

    @property
    def group(self) -> str:
        return f"{self.engine.value}/{self.gpu.memory_kind.value}"

    def config(self, input_tokens: int, output_tokens: int, concurrency: int) -> InferenceConfig:
        return InferenceConfig(
            accelerator_count=self.count,
            weight_precision=self.precision,
            engine=self.engine,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            concurrency=concurrency,
            tensor_parallel=self.tensor_parallel,
            pipeline_parallel=self.pipeline_parallel,
            kv_cache_precision=self.kv_cache_precision,
        )


def _setup(row: Row) -> _Setup | str:
    engine = _ENGINES.get(row["engine"])
    if engine is None:
        return (
            f"engine {row['engine']!r} has no profile (profiled: vLLM, TensorRT-LLM, SGLang, TGI, llama.cpp)"
        )
    model = resolve_model(row["model"])
    if model is None:
        return f"{_base_name(row['model'])} is not in models.csv"
    resolved = resolve_gpu(row["gpu"])
    if resolved is None:
        return f"{row['gpu']} is not in gpus.csv"
    precision = _INFERENCE_PRECISIONS.get(
        row["precision"].split(" (")[0] if "GGUF" in row["precision"] else row["precision"]
    )
    if precision is None:
        return f"precision {row['precision']!r} not stated or not modelled"
    count = int(row["gpu_count"])
    parallel = row["parallelism"]
    tp_match = re.match(r"TP(\d+)", parallel)
    if "layer split" in parallel:
        tp, pp = 1, count
    elif tp_match:
        tp, pp = int(tp_match.group(1)), 1
    else:
        tp, pp = count, 1
    assumptions = tuple(a for a in (resolved.assumption,) if a)
    if precision == Precision.FP4 and resolved.spec.fp4_tflops is None:
        assumptions += ("gpus.csv has no FP4 peak; FP8 peak used",)
    kv_precision, kv_note = _kv_cache_precision(row, engine, precision)
    assumptions += (kv_note,)
    return _Setup(model, resolved.spec, engine, precision, count, tp, pp, kv_precision, assumptions)


def _kv_cache_precision(row: Row, engine: ServingEngine, precision: Precision) -> tuple[Precision, str]:
    """TensorRT-LLM's v0.5/v0.6.1 FP8 tables were built with `--enable_fp8 --fp8_kv_cache`
    (docs/source/performance.md @138f96d, "Running on A100: ... remove the `--enable_fp8
    --fp8_kv_cache` options"). llama.cpp caches f16 by default. Elsewhere (TensorRT-LLM v1.0,
    NIM) the KV-cache dtype is not stated and 16-bit is assumed."""
    documented = engine == ServingEngine.TENSORRT_LLM and row["engine_version"] in ("v0.5", "v0.6.1")
    if documented and precision == Precision.FP8:
        return Precision.FP8, "FP8 KV cache (performance.md build commands use --fp8_kv_cache)"
    if engine == ServingEngine.LLAMA_CPP:
        return Precision.FP16, "llama.cpp's default f16 KV cache (common.h: cache_type_k = GGML_TYPE_F16)"
    return Precision.BF16, "KV-cache dtype not stated; 16-bit assumed"


def _inference_case(
    rid: str,
    metric: Metric,
    measured: float,
    setup: _Setup,
    config: InferenceConfig,
    pick: Callable[[InferenceEstimate], float | None],
    extra: tuple[str, ...] = (),
) -> Case:
    """A case whose prediction is `pick` of `estimate_inference` under the given table."""

    def predict(table: EfficiencyTable) -> float:
        value = pick(estimate_inference(setup.model, setup.gpu, config, table))
        return math.nan if value is None else value

    return Case(
        rid,
        metric,
        measured,
        predict,
        setup.model.name,
        setup.gpu.name,
        setup.group,
        setup.assumptions + extra,
        family=serving_family(setup.gpu),
    )


def _per_sequence(e: InferenceEstimate) -> float:
    return e.performance.output_tokens_per_s_per_sequence


def _prefill(e: InferenceEstimate) -> float | None:
    return e.performance.prefill_ms


def _batch_throughput(e: InferenceEstimate) -> float | None:
    return e.performance.batch_output_tokens_per_s


def _inference_cases(row: Row) -> list[CaseOrSkip]:
    rid = row["id"]
    setup = _setup(row)
    if isinstance(setup, str):
        return [Skipped(rid, setup)]
    scenario = row["scenario"]
    batch = _number(row["batch_or_concurrency"])
    input_len = _number(row["input_len"])
    output_len = _number(row["output_len"])
    try:
        if scenario.startswith("single-stream decode") or scenario.startswith("prefill only"):
            return _single_stream_cases(row, setup)
        if input_len is None or output_len is None:
            return [Skipped(rid, "input/output lengths are dataset-variable and the row gives no means")]
        if scenario.startswith("batch-1 first-token latency"):
            config = setup.config(int(input_len), 1, 1)
            measured = float(row["ttft_ms_mean"])
            return [_inference_case(rid, Metric.TTFT, measured, setup, config, _prefill)]
        if scenario.startswith("offline static batch") and batch is not None:
            return _static_batch_case(row, setup, int(batch), int(input_len), int(output_len))
        if scenario.startswith("offline max throughput"):
            return [_saturating_case(row, setup, int(input_len), int(output_len))]
        if scenario.startswith("online") and batch is not None:
            return _online_cases(row, setup, int(batch), int(input_len), int(output_len))
    except InvalidSpec as error:
        return [Skipped(rid, f"engine rejects the layout: {error}")]
    return [Skipped(rid, f"scenario {scenario!r} not modelled")]


def _single_stream_cases(row: Row, setup: _Setup) -> list[CaseOrSkip]:
    """llama.cpp tables: batch-1 generation speed and (where the prompt length is given) prompt
    processing speed, which is reported as tokens/s and becomes TTFT = prompt / speed."""
    rid = row["id"]
    out: list[CaseOrSkip] = []
    output_len = _number(row["output_len"])
    decode = _number(row["output_tok_s_per_user"])
    if decode is not None and output_len is not None:
        # Prompt "short fixed" or not stated: 1 token; the KV read over the generated tokens dominates.
        config = setup.config(1, int(output_len), 1)
        extra = ("prompt length not stated; 1 token assumed",)
        out.append(_inference_case(rid, Metric.DECODE_BATCH1, decode, setup, config, _per_sequence, extra))
    prefill_rate = _number(row["prefill_tok_s"])
    prompt = 1024 if "1024 (prefill test)" in row["input_len"] else _number(row["input_len"])
    if prefill_rate is None:
        return out
    if prompt is None:
        out.append(Skipped(rid, "prompt-processing speed without a prompt length"))
    elif setup.gpu.bf16_tflops is None:
        out.append(
            Skipped(rid, f"prompt processing needs a compute peak; gpus.csv has none for {setup.gpu.name}")
        )
    else:
        config = setup.config(int(prompt), 1, 1)
        out.append(_inference_case(rid, Metric.TTFT, 1000.0 * prompt / prefill_rate, setup, config, _prefill))
    return out


def _static_batch_case(
    row: Row, setup: _Setup, batch: int, input_len: int, output_len: int
) -> list[CaseOrSkip]:
    rid = row["id"]
    per_gpu = "out tok/s/GPU" in row["notes"]
    if setup.tensor_parallel > 1 and not per_gpu and "ambiguous" in row["notes"]:
        return [Skipped(rid, "source unit is ambiguous (per GPU or total) for TP > 1")]
    measured = float(row["output_tok_s_aggregate"])
    config = setup.config(input_len, output_len, batch)
    return [_inference_case(rid, Metric.HIGH_BATCH, measured, setup, config, _batch_throughput)]


def _saturating_case(row: Row, setup: _Setup, input_len: int, output_len: int) -> CaseOrSkip:
    """trtllm-bench max throughput: the batch is whatever the KV cache holds."""
    rid = row["id"]
    probe = estimate_inference(setup.model, setup.gpu, setup.config(input_len, output_len, 1))
    batch = probe.memory.max_concurrency
    if batch < 1:
        return Skipped(rid, "the KV cache holds no sequence at this length on this GPU")
    config = setup.config(input_len, output_len, batch)
    extra = ("batch = the most sequences the KV cache holds (not in the row)",)
    measured = float(row["output_tok_s_aggregate"])
    return _inference_case(rid, Metric.HIGH_BATCH, measured, setup, config, _batch_throughput, extra)


def _online_cases(row: Row, setup: _Setup, batch: int, input_len: int, output_len: int) -> list[CaseOrSkip]:
    """Fixed-concurrency online runs (NIM/AIPerf): TTFT, and per-user speed at concurrency 1 or
    aggregate output throughput above it."""
    rid = row["id"]
    config = setup.config(input_len, output_len, batch)
    cases: list[CaseOrSkip] = [
        _inference_case(
            rid, Metric.TTFT, float(row["ttft_ms_mean"]), setup, config, lambda e: e.performance.ttft_ms
        )
    ]
    if batch == 1:
        measured = float(row["output_tok_s_per_user"])
        cases.append(_inference_case(rid, Metric.DECODE_BATCH1, measured, setup, config, _per_sequence))
    else:
        measured = float(row["output_tok_s_aggregate"])
        cases.append(
            _inference_case(
                rid, Metric.HIGH_BATCH, measured, setup, config, lambda e: e.performance.output_tokens_per_s
            )
        )
    return cases


# ---- training -----------------------------------------------------------------------------------


def _notes_flag(notes: str, key: str) -> bool:
    return f"{key}=True" in notes


def _micro_batch(notes: str) -> int:
    match = re.search(r"micro_batch (\d+)", notes)
    return int(match.group(1)) if match else 1


def _throughput_case(row: Row) -> CaseOrSkip:
    """llm-foundry rows: tokens/s/GPU, expressed as accelerator-hours per 1e9 tokens."""
    rid = row["id"]
    resolved = resolve_gpu(row["gpu_type"])
    if resolved is None:
        return Skipped(rid, f"{row['gpu_type']} is not in gpus.csv")
    sequence = int(row["seq_len"])
    model = mpt_model(row["model"], float(row["params_b"]), sequence)
    if model is None:
        return Skipped(rid, f"{row['model']} shapes unknown")
    precision = Precision.FP8 if "fp8" in row["precision"] else Precision.BF16
    config = TrainingConfig(
        accelerator_count=int(row["gpu_count"]),
        precision=precision,
        tokens=1e9,
        sequence_length=sequence,
        micro_batch_size=_micro_batch(row["notes"]),
        zero_stage=3,  # FULL_SHARD
        activation_checkpointing=_notes_flag(row["notes"], "act_ckpt"),
    )
    measured = 1e9 / float(row["throughput_tokens_per_s_per_gpu"]) / 3600.0

    def predict(
        table: EfficiencyTable, m: ModelArchitecture = model, a: AcceleratorSpec = resolved.spec
    ) -> float:
        return estimate_training(m, a, config, table).accelerator_hours or math.nan

    return Case(
        rid,
        Metric.TRAINING_HOURS,
        measured,
        predict,
        model.name,
        resolved.spec.name,
        f"training/{resolved.spec.family}/{precision.value}",
        tuple(a for a in (resolved.assumption,) if a),
    )


# Accelerator count for run totals whose row has none: the largest count among the fitted rows
# (llm-foundry's 512-GPU tables), i.e. the edge of what the fit has seen. A stated assumption.
RUN_TOTAL_ACCELERATORS = 512
# Published counts of whole runs the rows do not carry: Llama 3 405B was pre-trained on 16,384
# H100 (The Llama 3 Herd of Models, arXiv:2407.21783 §3.3; DatacenterDynamics 2024-07-29).
_RUN_ACCELERATORS = {"Llama-3.1-405B": (16_384, "16,384 H100 (Llama 3 paper, arXiv:2407.21783 §3.3)")}
# Pre-training sequence length: Llama 3 models were pre-trained at 8K tokens (Llama 3 paper §3.4.1,
# "an initial sequence length of 8K tokens"; trn004's notes: "context 8k"); Llama 2 at 4K (its
# model card: "Content Length 4k").
_RUN_SEQUENCE = {"Llama-2": 4096, "Llama-3": 8192}


def _run_total_case(row: Row) -> CaseOrSkip:
    """Published GPU-hours of whole runs (Meta): they include failures, restarts and everything
    else a production run loses (calibration README caveat 8). They fit the whole-run efficiency
    (whole_run.py) and are predicted with it, each run held out of its own fit."""
    rid = row["id"]
    tokens = _tokens(row["tokens"])
    if tokens is None:
        return Skipped(rid, "token count not in the row")
    resolved = resolve_gpu(row["gpu_type"])
    if resolved is None:
        return Skipped(rid, f"{row['gpu_type']} is not in gpus.csv")
    model = resolve_model(_base_name(row["model"]))
    if model is None:
        if _number(row["params_b"]) is None:
            return Skipped(rid, "parameter count not in the row or models.csv")
        return Skipped(rid, f"{_base_name(row['model'])} shapes are not in models.csv")
    if model.is_moe:
        return Skipped(
            rid, "MoE pre-training with expert parallelism is not modelled (ZeRO data parallelism only)"
        )
    published = _RUN_ACCELERATORS.get(_base_name(row["model"]))
    count = int(_number(row["gpu_count"]) or (published[0] if published else RUN_TOTAL_ACCELERATORS))
    count_note = published[1] if published else f"{count} accelerators (none in the row)"
    sequence = next((v for k, v in _RUN_SEQUENCE.items() if row["model"].startswith(k)), 4096)
    config = TrainingConfig(
        accelerator_count=count, precision=Precision.BF16, tokens=tokens, sequence_length=sequence
    )
    assumptions = (
        f"{count_note}, sequence {sequence}, ZeRO-3, micro-batch 1, no recomputation (none in the row)",
        "reported total includes failures/restarts",
    ) + tuple(a for a in (resolved.assumption,) if a)

    def predict(
        table: EfficiencyTable, m: ModelArchitecture = model, a: AcceleratorSpec = resolved.spec
    ) -> float:
        run = estimate_training(m, a, config, table).whole_run
        return math.nan if run is None else run.accelerator_hours

    return Case(
        rid,
        Metric.WHOLE_RUN_HOURS,
        float(row["gpu_hours"]),
        predict,
        model.name,
        resolved.spec.name,
        "whole-run",
        assumptions,
    )


def _training_case(row: Row) -> CaseOrSkip:
    rid = row["id"]
    if row["kind"] == "training throughput benchmark":
        return _throughput_case(row)
    if row["gpu_hours"] and row["tokens"]:
        return _run_total_case(row)
    if row["achieved_tflops_per_gpu"] and not row["throughput_tokens_per_s_per_gpu"]:
        return Skipped(rid, "achieved TFLOPS without tokens/s or the sequence length")
    return Skipped(rid, "no tokens and accelerator-hours pair in the row")


def build_cases() -> tuple[list[Case], list[Skipped]]:
    """Every calibration row as a Case or a Skipped, in file order."""
    produced: list[CaseOrSkip] = []
    produced += [_weight_case(row) for row in read_rows("memory_footprints.csv")]
    for row in read_rows("inference_benchmarks.csv"):
        produced += _inference_cases(row)
    produced += [_training_case(row) for row in read_rows("training_runs.csv")]
    cases = [item for item in produced if isinstance(item, Case)]
    skipped = [item for item in produced if isinstance(item, Skipped)]
    return cases, skipped
