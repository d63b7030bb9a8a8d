// Package jobs is kiln's scale-out queue: work that needs a capability the
// daemon's host lacks (an NVIDIA GPU run, an AMD GPU run, a torch
// evaluation) goes as a job to worker hosts over NATS JetStream, and its
// result comes back to the daemon, which stores it in the runs store (the
// system of record).
//
// The pieces:
//
//   - Server: a NATS server with JetStream (ServerConfig, StartServer):
//     embedded in kiln serve (file store in the data folder, loopback
//     listener by default), or one node of a cluster (kiln nats-node:
//     Name, Cluster, Routes). Clients authenticate with nkeys (workers
//     with WorkerPermissions, daemons with all); no keys and no TLS only
//     on loopback. Off loopback (or with TLS on) the listener and the
//     cluster routes use TLS: a given certificate, or a CA and a server
//     certificate generated in StoreDir/tls and reused (clients pass the
//     CA as ConnConfig.CAFile; routes verify each other against it).
//     Connect takes a comma-separated list of URLs and reconnects to
//     another node when one goes.
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
//     id) and only then acks it; a result the store refuses for good
//     (Permanent, ErrPermanent) is dead-lettered with its reason, one it
//     cannot take for now is offered again after a growing delay; turns
//     max-deliveries advisories into dead letters recorded as failures;
//     lists live workers. Queue.Stats reports each capability's jobs.
//   - Artifacts: the object store, content-addressed by SHA-256, for what
//     does not belong in a message (executables).
//
// On a cluster the streams hold QueueConfig.Replicas copies (3 on three
// nodes: one node may be lost); while a leader is elected the JetStream
// API does not answer for a few seconds, and the queue's set-up calls, job
// and result publishes and acks are retried (Transient errors) rather than
// failed.
//
// Delivery is at least once end to end: a worker killed mid-job stops its
// in-progress acks and the job is redelivered after AckWait; a result
// published twice is dropped by JetStream's duplicate window or by the
// store's job id key; a job delivered MaxDeliver times without a result
// is dead-lettered with its reason.
package jobs
