// Package jobs is kiln's scale-out queue: work that needs a capability the
// daemon's host lacks (an NVIDIA GPU run, an AMD GPU run, a torch
// evaluation) goes as a job to worker hosts over NATS JetStream, and its
// result comes back to the daemon, which stores it in the runs store (the
// system of record).
//
// The pieces:
//
//   - Server: a NATS server with JetStream embedded in kiln serve (file
//     store in the data folder, loopback listener), or none when an
//     external server or cluster is given by URL (Connect).
//   - Queue (daemon): ensures the streams — KILN_JOBS (work queue,
//     kiln.jobs.<capability>), KILN_RESULTS (kiln.results.<kind>),
//     KILN_DEAD (kiln.dead.<capability>) and KILN_JOB_EVENTS (JetStream's
//     max-deliveries advisories) — one durable pull consumer per
//     capability, and the artifact object store; publishes jobs with their
//     id as Nats-Msg-Id.
//   - Worker (kiln worker): pulls jobs of its capabilities, runs them with
//     a Handler per kind, sends in-progress acks while a job runs,
//     publishes the result and only then acks the job; heartbeats; drains
//     on Stop.
//   - Collector (daemon): stores each result (StoreFunc, idempotent by job
//     id) and only then acks it; turns max-deliveries advisories into dead
//     letters recorded as failures; lists live workers.
//   - Artifacts: the object store, content-addressed by SHA-256, for what
//     does not belong in a message (executables).
//
// Delivery is at least once end to end: a worker killed mid-job stops its
// in-progress acks and the job is redelivered after AckWait; a result
// published twice is dropped by JetStream's duplicate window or by the
// store's job id key; a job delivered MaxDeliver times without a result
// is dead-lettered with its reason.
package jobs
