"""inspect_ai baseline: N single-turn samples, mock model, includes() scorer."""

import json
import sys
import tempfile
import time

from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import includes
from inspect_ai.solver import generate

n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000


def reply(input, tools, tool_choice, config):  # a fixed answer, with usage so no tokenizer download
    out = ModelOutput.from_content(model="mockllm", content="hello")
    out.usage = ModelUsage(input_tokens=5, output_tokens=1, total_tokens=6)
    return out


task = Task(
    dataset=[Sample(input=f"Say hello {i}", target="hello") for i in range(n)],
    solver=generate(),
    scorer=includes(),
)
model = get_model("mockllm/model", custom_outputs=reply)
with tempfile.TemporaryDirectory() as logs:
    start, cpu = time.perf_counter(), time.process_time()
    result = eval(task, model=model, log_dir=logs, display="none", max_connections=100, max_samples=100)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
log = result[0]
print(
    json.dumps(
        {
            "samples": n,
            "seconds": elapsed,
            "per_sample_ms": 1000 * elapsed / n,
            "cpu_per_sample_ms": 1000 * cpu / n,
            "status": log.status,
            "accuracy": log.results.scores[0].metrics["accuracy"].value if log.results else None,
        }
    )
)
