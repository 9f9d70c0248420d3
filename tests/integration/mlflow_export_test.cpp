// `orchestrate export mlflow` as an MLflow user meets it: the runs appear in
// MLflow's own tracking server (the backend `mlflow ui` shows) with the
// store's params, every metric value at its step, and the tags; exporting
// again replaces a run instead of adding a copy.
#include <gtest/gtest.h>

#include <filesystem>

#include "command_runner.h"
#include "orchestrate/testing/python_reference.h"

namespace orchestrate::testing {
namespace {

namespace fs = std::filesystem;

const char* const kRecipe = R"(schema_version = 1
[run]
name = "mlflow_probe"
device = "cpu"
batch_size = 32
max_steps = 12
log_every = 3
num_workers = 0
[data]
plugin = "mock"
channels = 1
height = 28
width = 28
num_classes = 10
train_size = 384
test_size = 64
[model]
plugin = "convnet"
[optimizer]
plugin = "adam"
lr = 0.002
[checkpoint]
every_epochs = 0
at_end = false
[log]
progress = "never"
)";

TEST(MlflowExport, MlflowsTrackingServerReadsTheRunsParamsMetricsAndTags) {
  ScratchDir dir;
  const std::string recipe = dir.write("probe.toml", kRecipe), db = dir.file("runs.db"), out = dir.file("mlruns");
  ASSERT_EQ(run_orchestrate("run " + recipe + " --db " + db + " --tag team=vision").exit_code, 0);
  const auto exported = run_orchestrate("export mlflow 1 " + out + " --db " + db + " --experiment probes");
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  EXPECT_NE(exported.output.find("mlflow ui --backend-store-uri " + out), std::string::npos) << exported.output;
  // Again: the same run directory, replaced.
  ASSERT_EQ(run_orchestrate("export mlflow 1 " + out + " --db " + db + " --experiment probes").exit_code, 0);

  // MLflow's server on the exported directory, asked over its REST API as
  // the UI asks it; what it says is compared with the run store.
  const std::string checked = run_python(R"PY(
import json, os, socket, sqlite3, subprocess, sys, time, urllib.request
out, db = ")PY" + out + R"PY(", ")PY" + db + R"PY("
with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
env = dict(os.environ, MLFLOW_ALLOW_FILE_STORE="true")
server = subprocess.Popen([sys.executable, "-m", "mlflow", "server", "--backend-store-uri", out, "--host", "127.0.0.1",
                           "--port", str(port), "--workers", "1"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
base = f"http://127.0.0.1:{port}/api/2.0/mlflow"
def call(path, body=None):
    request = urllib.request.Request(base + path, data=None if body is None else json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(request, timeout=10))
try:
    for _ in range(120):
        try:
            experiment = call("/experiments/get-by-name?experiment_name=probes")["experiment"]
            break
        except Exception:
            if server.poll() is not None:
                sys.exit("mlflow server ended: " + server.stderr.read().decode()[-2000:])
            time.sleep(0.5)
    else:
        sys.exit("mlflow server did not answer in 60 s")
    runs = call("/runs/search", {"experiment_ids": [experiment["experiment_id"]]})["runs"]
    assert len(runs) == 1, f"{len(runs)} runs (a second export must replace the first)"
    run = runs[0]
    assert run["info"]["run_name"] == "mlflow_probe", run["info"]
    assert run["info"]["status"] == "FINISHED", run["info"]
    params = {p["key"]: p["value"] for p in run["data"]["params"]}
    tags = {t["key"]: t["value"] for t in run["data"]["tags"]}
    with sqlite3.connect(db) as store:
        stored_params = dict(store.execute("select key, value from run_params where run_id = 1"))
        stored_loss = store.execute("select step, value from metrics where run_id = 1 and name = 'train/loss' "
                                    "order by step").fetchall()
    assert params == stored_params, set(params.items()) ^ set(stored_params.items())
    assert params["optimizer.lr"] == "0.002", params["optimizer.lr"]
    assert tags["team"] == "vision" and tags["orchestrate.run_id"] == "1" and tags["mlflow.runName"] == "mlflow_probe", tags
    assert "lr = 0.002" in tags["mlflow.note.content"], tags["mlflow.note.content"]
    history = call(f"/metrics/get-history?run_id={run['info']['run_id']}&metric_key=train/loss")["metrics"]
    got = sorted((m["step"], m["value"]) for m in history)
    assert got == stored_loss, (got, stored_loss)
    print(f"ok {len(params)} params, {len(got)} train/loss values, {len(tags)} tags")
finally:
    server.terminate()
    server.wait(timeout=30)
)PY");
  EXPECT_EQ(checked.rfind("ok ", 0), 0u) << checked;
  std::cout << checked;

  // The experiment holds one run directory, and MLflow's Default experiment is there.
  std::size_t run_dirs = 0;
  for (const auto& experiment : fs::directory_iterator(out))
    if (experiment.path().filename() != "0")
      for (const auto& entry : fs::directory_iterator(experiment.path())) run_dirs += entry.is_directory();
  EXPECT_EQ(run_dirs, 1u);
  EXPECT_TRUE(fs::exists(fs::path(out) / "0" / "meta.yaml"));
}

TEST(MlflowExport, NoDirectoryOrAnUnknownRunIsOneLineAndExitCode2) {
  ScratchDir dir;
  const std::string recipe = dir.write("probe.toml", kRecipe), db = dir.file("runs.db");
  ASSERT_EQ(run_orchestrate("run " + recipe + " --db " + db + " --set run.max_steps=1").exit_code, 0);
  const auto no_dir = run_orchestrate("export mlflow --db " + db);
  EXPECT_EQ(no_dir.exit_code, 2) << no_dir.output;
  EXPECT_NE(no_dir.output.find("export mlflow: give the directory to write"), std::string::npos) << no_dir.output;
  const auto unknown = run_orchestrate("export mlflow 7 " + dir.file("out") + " --db " + db);
  EXPECT_EQ(unknown.exit_code, 2) << unknown.output;
  EXPECT_FALSE(fs::exists(dir.file("out")));
}

// A sweep in MLflow: one run for the sweep, its trials as child runs
// (mlflow.parentRunId), as MLflow's UI nests them and its search finds them.
TEST(MlflowExport, ASweepIsAParentRunWithItsTrialsAsChildren) {
  ScratchDir dir;
  const std::string recipe = dir.write("probe.toml", kRecipe), db = dir.file("runs.db"), out = dir.file("mlruns");
  const std::string spec = dir.write("lr.toml", "[sweep]\nrecipe = \"probe.toml\"\nmetric = \"train/loss\"\n"
                                                "mode = \"min\"\nconcurrency = 1\n[sweep.parameters]\n"
                                                "\"optimizer.lr\" = [0.001, 0.002]\n");
  const auto swept = run_orchestrate("sweep " + spec + " --db " + db);
  ASSERT_EQ(swept.exit_code, 0) << swept.output;
  const auto exported = run_orchestrate("export mlflow --sweep lr " + out + " --db " + db + " --experiment sweeps");
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  EXPECT_NE(exported.output.find("sweep 1 (lr): MLflow run "), std::string::npos) << exported.output;
  const std::string checked = run_python(R"PY(
import os, sqlite3
os.environ["MLFLOW_ALLOW_FILE_STORE"] = "true"
from mlflow.tracking import MlflowClient
out, db = ")PY" + out + R"PY(", ")PY" + db + R"PY("
client = MlflowClient(tracking_uri=out)
experiment = client.get_experiment_by_name("sweeps")
runs = client.search_runs([experiment.experiment_id])
parents = [r for r in runs if "orchestrate.sweep_id" in r.data.tags]
assert len(runs) == 3 and len(parents) == 1, [r.data.tags.get("mlflow.runName") for r in runs]
parent = parents[0]
children = client.search_runs([experiment.experiment_id], f"tags.mlflow.parentRunId = '{parent.info.run_id}'")
assert sorted(c.data.params["optimizer.lr"] for c in children) == ["0.001", "0.002"], children
assert parent.info.run_name == "lr" and parent.info.status == "FINISHED", parent.info
params = parent.data.params
assert params["sweep.metric"] == "train/loss" and params["sweep.trials"] == "2", params
with sqlite3.connect(db) as store:
    best = store.execute("select t.value from sweeps s join sweep_trials t on t.sweep_id = s.id "
                         "and t.trial = s.best_trial").fetchone()[0]
assert parent.data.metrics["train/loss"] == best, (parent.data.metrics, best)
print(f"ok parent {parent.info.run_id} with {len(children)} children, best train/loss {best}")
)PY");
  EXPECT_EQ(checked.rfind("ok ", 0), 0u) << checked;
  const auto unknown = run_orchestrate("export mlflow --sweep 9 " + out + " --db " + db);
  EXPECT_EQ(unknown.exit_code, 2) << unknown.output;
  EXPECT_NE(unknown.output.find("no sweep '9'"), std::string::npos) << unknown.output;
}

}  // namespace
}  // namespace orchestrate::testing
