import assert from "node:assert/strict";
import cluster, { type Worker } from "node:cluster";
import { once } from "node:events";
import path from "node:path";
import { after, test } from "node:test";
import { everyWorkerDead } from "../../src/cli/commands/cluster-primary.js";
import { tempProject } from "../helpers/temp-project.js";

// A worker whose IPC channel outlives it: it hands the channel's descriptor (fd 3) to a
// short-lived grandchild, then exits. The primary then sees the worker's `exit` before its
// `disconnect`, the order in which a `--workers` primary once missed its last worker and
// never exited.
const LINGERING_CHANNEL_WORKER = `
import { spawn } from "node:child_process";
spawn("sleep", ["1"], { stdio: ["ignore", "ignore", "ignore", 3] }).unref();
process.exit(0);
`;

const project = tempProject({ "worker.mjs": LINGERING_CHANNEL_WORKER });
after(project.cleanup);

test("the last worker's exit counts even while cluster.workers still lists it", async () => {
  cluster.setupPrimary({ exec: path.join(project.dir, "worker.mjs"), execArgv: [], silent: true });
  const worker = cluster.fork();
  const [exited] = (await once(cluster, "exit")) as [Worker];
  assert.equal(exited, worker);
  // The order that broke the old check (an empty cluster.workers): still listed at its exit.
  assert.deepEqual(Object.keys(cluster.workers ?? {}), [String(worker.id)]);
  assert.equal(everyWorkerDead(cluster.workers), true);
  if (worker.isConnected()) await once(worker, "disconnect");
  assert.deepEqual(Object.keys(cluster.workers ?? {}), []);
});

test("a live worker keeps the cluster up", () => {
  assert.equal(everyWorkerDead({}), true);
  assert.equal(everyWorkerDead(undefined), true);
  const alive = { isDead: () => false } as Worker;
  const dead = { isDead: () => true } as Worker;
  assert.equal(everyWorkerDead({ 1: dead, 2: alive }), false);
  assert.equal(everyWorkerDead({ 1: dead, 2: dead }), true);
});
