package jobs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Names of the streams, subjects and buckets kiln uses.
const (
	// JobsStream is the work queue: subjects kiln.jobs.<capability>, work
	// queue retention (a job is gone once acked), one durable pull
	// consumer per capability shared by every worker that has it.
	JobsStream = "KILN_JOBS"
	JobsPrefix = "kiln.jobs."
	// ResultsStream holds results (kiln.results.<kind>) until the daemon
	// has stored and acked them.
	ResultsStream = "KILN_RESULTS"
	ResultsPrefix = "kiln.results."
	// DeadStream keeps dead-lettered jobs (kiln.dead.<capability>) for
	// inspection: jobs delivered MaxDeliver times without a result.
	DeadStream = "KILN_DEAD"
	DeadPrefix = "kiln.dead."
	// EventsStream captures JetStream's max-deliveries advisories for the
	// jobs stream, so that a dead letter is noticed even when the daemon
	// was down as it happened.
	EventsStream    = "KILN_JOB_EVENTS"
	maxDeliverEvent = "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES." + JobsStream + ".>"
	// HeartbeatPrefix is where workers say they are alive
	// (kiln.workers.<worker id>), as core NATS messages.
	HeartbeatPrefix = "kiln.workers."
	// ArtifactBucket is the object store of artifacts, named by the
	// SHA-256 of their content (the runs blob store's names).
	ArtifactBucket = "kiln_artifacts"
	// daemonConsumer is the daemon's durable consumer on results and
	// events.
	daemonConsumer = "kiln-daemon"
)

// ConsumerName is the durable consumer of a capability's jobs.
func ConsumerName(capability string) string { return "jobs-" + capability }

var capRe = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,31}$`)

// ValidCapability reports whether c can name a capability (a subject
// token: lower case letters, digits, - and _).
func ValidCapability(c string) bool { return capRe.MatchString(c) }

// Job is one unit of work for a worker host.
type Job struct {
	// ID identifies the job: it is the Nats-Msg-Id (JetStream drops a
	// second publish within the duplicate window) and the key of its
	// stored result (a second result never makes a second record).
	// Derive it from what the job does, so that publishing the same work
	// twice is one job.
	ID string `json:"id"`
	// Kind selects the worker's handler ("complete", "sleep").
	Kind string `json:"kind"`
	// Capability is what a worker must have to run it ("gpu", "amd",
	// "torch"); it routes the job to kiln.jobs.<capability>.
	Capability string          `json:"capability"`
	Payload    json.RawMessage `json:"payload,omitempty"`
	Created    time.Time       `json:"created"`
}

// Result is what became of a job.
type Result struct {
	JobID      string `json:"job_id"`
	Kind       string `json:"kind"`
	Capability string `json:"capability"`
	Worker     string `json:"worker,omitempty"`
	// OK: the handler finished; Payload is its output. Otherwise Error
	// says why the job failed for good.
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
	// Dead: the job was dead-lettered (delivered MaxDeliver times without
	// a result: its workers died or timed out every time).
	Dead       bool            `json:"dead,omitempty"`
	Deliveries int             `json:"deliveries"`
	Payload    json.RawMessage `json:"payload,omitempty"`
	Started    time.Time       `json:"started,omitzero"`
	Finished   time.Time       `json:"finished,omitzero"`
}

// QueueConfig are the queue's delivery settings.
type QueueConfig struct {
	// AckWait is how long a delivered job may go without an ack or a
	// heartbeat (in-progress ack) before it is redelivered: how soon the
	// job of a killed worker runs again. Default 30s.
	AckWait time.Duration
	// MaxDeliver is how many deliveries a job gets before it is
	// dead-lettered. Default 5.
	MaxDeliver int
	// DuplicateWindow is how long JetStream remembers a job id to drop a
	// second publish. Default 10m. (The store's job results table drops
	// later duplicates.)
	DuplicateWindow time.Duration
	// Replicas is the streams' replica count (1 embedded; 3 on a cluster).
	Replicas int
}

// Defaults fills in zero fields.
func (c *QueueConfig) Defaults() {
	if c.AckWait == 0 {
		c.AckWait = 30 * time.Second
	}
	if c.MaxDeliver == 0 {
		c.MaxDeliver = 5
	}
	if c.DuplicateWindow == 0 {
		c.DuplicateWindow = 10 * time.Minute
	}
	if c.Replicas == 0 {
		c.Replicas = 1
	}
}

// Validate reports settings the queue cannot use.
func (c *QueueConfig) Validate() error {
	switch {
	case c.AckWait < 100*time.Millisecond:
		return fmt.Errorf("jobs queue: AckWait %s is too short", c.AckWait)
	case c.MaxDeliver < 1:
		return fmt.Errorf("jobs queue: MaxDeliver %d must be at least 1", c.MaxDeliver)
	case c.Replicas < 1 || c.Replicas > 5:
		return fmt.Errorf("jobs queue: Replicas %d must be 1 to 5", c.Replicas)
	}
	return nil
}

// Queue is the daemon's side of the queue: it owns the streams and the
// per-capability consumers and publishes jobs.
type Queue struct {
	js  jetstream.JetStream
	cfg QueueConfig
	art *Artifacts

	ensured sync.Map // capability -> struct{}: consumer made by this Queue
}

// NewQueue ensures the streams, the daemon's consumers and the artifact
// bucket exist (creating or updating them; idempotent) on nc.
func NewQueue(ctx context.Context, nc *nats.Conn, cfg QueueConfig) (*Queue, error) {
	cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("jobs queue: %w", err)
	}
	streams := []jetstream.StreamConfig{
		{Name: JobsStream, Subjects: []string{JobsPrefix + ">"}, Retention: jetstream.WorkQueuePolicy,
			Storage: jetstream.FileStorage, Duplicates: cfg.DuplicateWindow, Replicas: cfg.Replicas},
		{Name: ResultsStream, Subjects: []string{ResultsPrefix + ">"}, Retention: jetstream.WorkQueuePolicy,
			Storage: jetstream.FileStorage, Duplicates: cfg.DuplicateWindow, Replicas: cfg.Replicas},
		{Name: DeadStream, Subjects: []string{DeadPrefix + ">"}, Retention: jetstream.LimitsPolicy,
			Storage: jetstream.FileStorage, Duplicates: cfg.DuplicateWindow, MaxAge: 30 * 24 * time.Hour, Replicas: cfg.Replicas},
		{Name: EventsStream, Subjects: []string{maxDeliverEvent}, Retention: jetstream.WorkQueuePolicy,
			Storage: jetstream.FileStorage, Replicas: cfg.Replicas},
	}
	// On a cluster the API may not answer for a while (a cluster still
	// forming, a node down, a leader being elected): each call is retried
	// for up to clusterWait.
	for _, sc := range streams {
		err := retry(ctx, clusterWait, func(ctx context.Context) error {
			_, err := js.CreateOrUpdateStream(ctx, sc)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("jobs queue: stream %s: %w%s", sc.Name, err, replicaHint(ctx, js, sc.Name, cfg.Replicas))
		}
	}
	for _, stream := range []string{ResultsStream, EventsStream} {
		err := retry(ctx, clusterWait, func(ctx context.Context) error {
			_, err := js.CreateOrUpdateConsumer(ctx, stream, jetstream.ConsumerConfig{
				Durable: daemonConsumer, AckPolicy: jetstream.AckExplicitPolicy,
				AckWait: time.Minute, MaxDeliver: -1, MaxAckPending: 256,
			})
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("jobs queue: consumer on %s: %w", stream, err)
		}
	}
	var art *Artifacts
	err = retry(ctx, clusterWait, func(ctx context.Context) error {
		art, err = NewArtifacts(ctx, js, cfg.Replicas)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%w%s", err, replicaHint(ctx, js, "OBJ_"+ArtifactBucket, cfg.Replicas))
	}
	return &Queue{js: js, cfg: cfg, art: art}, nil
}

// replicaHint explains a failed stream update when the stream exists with
// another replica count than the queue asks for (JetStream changes it in
// place when the cluster has the peers; a single server cannot hold more
// than one replica).
func replicaHint(ctx context.Context, js jetstream.JetStream, name string, want int) string {
	ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	s, err := js.Stream(ictx, name)
	if err != nil {
		return ""
	}
	if have := s.CachedInfo().Config.Replicas; have != want {
		return fmt.Sprintf(" (the stream exists with %d replicas and the queue asks for %d: the update needs as many NATS servers in the cluster; "+
			"ask for %d replicas, or add servers)", have, want, have)
	}
	return ""
}

// Artifacts returns the artifact store.
func (q *Queue) Artifacts() *Artifacts { return q.art }

// JetStream returns the JetStream context (for tests and inspection).
func (q *Queue) JetStream() jetstream.JetStream { return q.js }

// EnsureCapability creates (or updates) the durable pull consumer of a
// capability's jobs; workers bind to it by name. Publish calls it.
func (q *Queue) EnsureCapability(ctx context.Context, capability string) error {
	if !ValidCapability(capability) {
		return fmt.Errorf("jobs: bad capability %q", capability)
	}
	err := retry(ctx, clusterWait, func(ctx context.Context) error {
		_, err := q.js.CreateOrUpdateConsumer(ctx, JobsStream, jetstream.ConsumerConfig{
			Durable:       ConsumerName(capability),
			FilterSubject: JobsPrefix + capability,
			AckPolicy:     jetstream.AckExplicitPolicy,
			AckWait:       q.cfg.AckWait,
			MaxDeliver:    q.cfg.MaxDeliver,
			MaxAckPending: 10000,
			// Each pull waits for at most one job; many workers pull at once.
			MaxWaiting: 4096,
		})
		return err
	})
	if err != nil {
		return fmt.Errorf("jobs: consumer for %s: %w", capability, err)
	}
	return nil
}

// Publish queues a job on kiln.jobs.<capability>. It returns false when
// JetStream dropped it as a duplicate of a job with the same id still in
// its duplicate window.
func (q *Queue) Publish(ctx context.Context, j Job) (bool, error) {
	if j.ID == "" || j.Kind == "" {
		return false, errors.New("publish job: id and kind are required")
	}
	// One consumer update per capability and Queue, not one per job (a
	// round trip each: it bounded publishing to ~600 jobs/s).
	if _, ok := q.ensured.Load(j.Capability); !ok {
		if err := q.EnsureCapability(ctx, j.Capability); err != nil {
			return false, err
		}
		q.ensured.Store(j.Capability, struct{}{})
	}
	if j.Created.IsZero() {
		j.Created = time.Now().UTC()
	}
	b, err := json.Marshal(j)
	if err != nil {
		return false, fmt.Errorf("publish job %s: %w", j.ID, err)
	}
	// A publish the cluster did not confirm (a node down, a leader being
	// elected) is sent again: the job id makes a second copy a duplicate.
	var ack *jetstream.PubAck
	err = retry(ctx, clusterWait, func(ctx context.Context) error {
		ack, err = q.js.Publish(ctx, JobsPrefix+j.Capability, b, jetstream.WithMsgID(j.ID), jetstream.WithExpectStream(JobsStream))
		return err
	})
	if err != nil {
		return false, fmt.Errorf("publish job %s: %w", j.ID, err)
	}
	return !ack.Duplicate, nil
}

// Artifacts is the JetStream object store of artifacts, content-addressed
// by SHA-256 (hex): what does not fit in a message travels through it.
type Artifacts struct {
	obs jetstream.ObjectStore
}

// NewArtifacts creates or binds the artifact bucket.
func NewArtifacts(ctx context.Context, js jetstream.JetStream, replicas int) (*Artifacts, error) {
	obs, err := js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
		Bucket: ArtifactBucket, Storage: jetstream.FileStorage, Replicas: max(replicas, 1),
		Description: "kiln artifacts by SHA-256",
	})
	if err != nil {
		return nil, fmt.Errorf("artifact store: %w", err)
	}
	return &Artifacts{obs: obs}, nil
}

// bindArtifacts binds the existing bucket (workers may not create it).
func bindArtifacts(ctx context.Context, js jetstream.JetStream) (*Artifacts, error) {
	obs, err := js.ObjectStore(ctx, ArtifactBucket)
	if err != nil {
		return nil, fmt.Errorf("artifact store: %w", err)
	}
	return &Artifacts{obs: obs}, nil
}

// Put stores data under its SHA-256 and returns the hash; content already
// there is not sent again.
func (a *Artifacts) Put(ctx context.Context, data []byte) (string, error) {
	sum := sha256.Sum256(data)
	h := hex.EncodeToString(sum[:])
	if _, err := a.obs.GetInfo(ctx, h); err == nil {
		return h, nil
	} else if !errors.Is(err, jetstream.ErrObjectNotFound) {
		return "", fmt.Errorf("put artifact %s: %w", h, err)
	}
	if _, err := a.obs.PutBytes(ctx, h, data); err != nil {
		return "", fmt.Errorf("put artifact %s: %w", h, err)
	}
	return h, nil
}

// Get returns the content stored under hash, checked against it.
func (a *Artifacts) Get(ctx context.Context, hash string) ([]byte, error) {
	b, err := a.obs.GetBytes(ctx, hash)
	if err != nil {
		return nil, fmt.Errorf("get artifact %s: %w", hash, err)
	}
	sum := sha256.Sum256(b)
	if hex.EncodeToString(sum[:]) != hash {
		return nil, fmt.Errorf("get artifact %s: content does not match its hash", hash)
	}
	return b, nil
}

// CapabilityStats is the state of one capability's jobs: its consumer on
// the jobs stream and its dead letters.
type CapabilityStats struct {
	Capability string `json:"capability"`
	// Waiting: jobs not yet delivered to a worker (NumPending).
	Waiting uint64 `json:"waiting"`
	// InFlight: jobs delivered and not yet acked (NumAckPending).
	InFlight int `json:"in_flight"`
	// Redelivered: of those in flight, the ones delivered more than once
	// (NumRedelivered).
	Redelivered int `json:"redelivered"`
	// Pulls: worker pull requests waiting for a job (NumWaiting).
	Pulls int `json:"pulls"`
	// Dead: messages on kiln.dead.<capability> (kept 30 days).
	Dead uint64 `json:"dead"`
}

// Stats reports each capability's jobs (those with a consumer, or dead
// letters), by capability.
func (q *Queue) Stats(ctx context.Context) ([]CapabilityStats, error) {
	byCap := map[string]*CapabilityStats{}
	get := func(c string) *CapabilityStats {
		s, ok := byCap[c]
		if !ok {
			s = &CapabilityStats{Capability: c}
			byCap[c] = s
		}
		return s
	}
	js, err := q.js.Stream(ctx, JobsStream)
	if err != nil {
		return nil, fmt.Errorf("queue stats: %w", err)
	}
	l := js.ListConsumers(ctx)
	for ci := range l.Info() {
		c, ok := strings.CutPrefix(ci.Name, "jobs-")
		if !ok || ci.Config.FilterSubject != JobsPrefix+c {
			continue
		}
		s := get(c)
		s.Waiting, s.InFlight, s.Redelivered, s.Pulls = ci.NumPending, ci.NumAckPending, ci.NumRedelivered, ci.NumWaiting
	}
	if err := l.Err(); err != nil {
		return nil, fmt.Errorf("queue stats: %w", err)
	}
	ds, err := q.js.Stream(ctx, DeadStream)
	if err != nil {
		return nil, fmt.Errorf("queue stats: %w", err)
	}
	di, err := ds.Info(ctx, jetstream.WithSubjectFilter(DeadPrefix+">"))
	if err != nil {
		return nil, fmt.Errorf("queue stats: %w", err)
	}
	for subj, n := range di.State.Subjects {
		if c, ok := strings.CutPrefix(subj, DeadPrefix); ok {
			get(c).Dead = n
		}
	}
	out := make([]CapabilityStats, 0, len(byCap))
	for _, s := range byCap {
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b CapabilityStats) int { return strings.Compare(a.Capability, b.Capability) })
	return out, nil
}
