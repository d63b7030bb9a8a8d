package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kiln-dev/kiln/runs/jobs"
)

// cmdNATSNode is `kiln nats-node`: one node of a NATS cluster with
// JetStream for the scale-out queue, when the daemon's embedded server is
// not enough (a queue that survives the loss of a host). Three nodes, each
// given the others as routes, make a cluster that keeps working with one
// down; kiln serve --dispatch --nats a,b,c --nats-replicas 3 and kiln worker
// --nats a,b,c use it. It runs until SIGINT/SIGTERM, then shuts down
// (JetStream's state is on disk in --store).
func cmdNATSNode(ctx context.Context, args []string, e env) error {
	fs := flag.NewFlagSet("nats-node", flag.ContinueOnError)
	var c common // --data and --log-level only: a node runs no sandbox
	c.data = e.getenv("KILN_DATA")
	if c.data == "" {
		c.data = "kiln-data"
	}
	fs.StringVar(&c.data, "data", c.data, "data folder ($KILN_DATA); the store is in it unless --store is given")
	fs.StringVar(&c.logLevel, "log-level", "info", "log level: debug (with the NATS server's debug lines), info, warn, error")
	store := fs.String("store", "", "JetStream store folder, and the generated TLS files (<store>/tls) (default <data>/nats-node)")
	host, _ := os.Hostname()
	name := fs.String("name", host, "server name, unique in the cluster")
	listen := fs.String("listen", "127.0.0.1:4222", "client listen address host:port; anything but loopback needs TLS and --worker-nkeys/--daemon-nkeys")
	cluster := fs.String("cluster", "", "cluster (route) listen address host:port; empty: a single server")
	clusterName := fs.String("cluster-name", "kiln", "cluster name, the same on every node")
	routes := fs.String("routes", "", "comma-separated cluster addresses (host:port) of the nodes; this node's own may be among them, so every node can get the same list")
	workerNKeys := fs.String("worker-nkeys", "", "file of the public nkeys (U..., one a line) of the workers let in (job permissions only)")
	daemonNKeys := fs.String("daemon-nkeys", "", "file of the public nkeys of the daemons let in (kiln serve --dispatch --nats-nkey SEED; all permissions)")
	tlsMode := fs.String("tls", jobs.TLSAuto, "TLS: auto (on when an address is not loopback or --tls-cert is given), on, off (loopback only)")
	tlsCert := fs.String("tls-cert", "", "server certificate (PEM); default with TLS: a CA and a certificate generated in <store>/tls and reused")
	tlsKey := fs.String("tls-key", "", "server certificate's key (PEM)")
	tlsCA := fs.String("tls-ca", "", "CA certificate the nodes' certificates chain to, which routes verify each other with (default: the generated CA; needed with --tls-cert and --cluster)")
	clientCA := fs.String("tls-client-ca", "", "mutual TLS: clients must present a certificate this CA signed (kiln worker --nats-cert/--nats-key)")
	if err := parseFlags(fs, args, e); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return badInput("nats-node takes no arguments (got %q)", fs.Arg(0))
	}
	log, err := c.logger(e)
	if err != nil {
		return err
	}
	h, p, err := net.SplitHostPort(*listen)
	if err != nil {
		return badInput("--listen %q: %v (want host:port)", *listen, err)
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		return badInput("--listen %q: bad port", *listen)
	}
	if *store == "" {
		*store = filepath.Join(c.data, "nats-node")
	}
	cfg := jobs.ServerConfig{StoreDir: *store, Name: *name, Host: h, Port: port, Cluster: *cluster, ClusterName: *clusterName,
		Routes: splitList(*routes), TLS: *tlsMode, TLSCert: *tlsCert, TLSKey: *tlsKey, TLSCA: *tlsCA, ClientCA: *clientCA, Log: log}
	if *workerNKeys != "" {
		if cfg.WorkerNKeys, err = readKeyList("--worker-nkeys", *workerNKeys); err != nil {
			return badInput("%v", err)
		}
	}
	if *daemonNKeys != "" {
		if cfg.DaemonNKeys, err = readKeyList("--daemon-nkeys", *daemonNKeys); err != nil {
			return badInput("%v", err)
		}
	}
	if err := serverConfigError(cfg, "--listen/--cluster/--routes", "--tls", "--tls-cert/--tls-key", "--tls-ca", "--worker-nkeys/--daemon-nkeys"); err != nil {
		return err
	}
	srv, err := jobs.StartServer(cfg)
	if err != nil {
		return err
	}
	defer srv.Stop()
	fmt.Fprintf(e.stderr, "kiln: nats-node %s ready on %s", srv.Name(), srv.URL())
	if *cluster != "" {
		fmt.Fprintf(e.stderr, " (cluster %s on %s)", *clusterName, *cluster)
	}
	fmt.Fprintln(e.stderr)
	if ca := srv.CAFile(); ca != "" {
		log.Info("nats-node: TLS with a generated certificate: clients need its CA (kiln worker and kiln serve --dispatch: --nats-ca FILE); "+
			"the other nodes of a cluster need this CA and its key in their <store>/tls before their first start",
			"ca", ca, "ca_key", filepath.Join(filepath.Dir(ca), jobs.CAKeyFile))
	}
	select {
	case <-e.soft:
	case <-ctx.Done():
	}
	log.Info("nats-node: shutting down")
	srv.Stop()
	return nil
}

// serverConfigError validates a NATS server configuration made from flags
// and names the flags in its error (jobs.ServerConfig.CheckFlags).
func serverConfigError(cfg jobs.ServerConfig, addrFlags, tlsFlag, certFlags, caFlag, keyFlags string) error {
	if err := cfg.CheckFlags(jobs.ServerFlags{Addr: addrFlags, TLS: tlsFlag, Cert: certFlags, CA: caFlag, Keys: keyFlags}); err != nil {
		return badInput("%v", err)
	}
	return nil
}

// readKeyList reads public nkeys (jobs.ReadKeys); flagName names the flag
// in errors.
func readKeyList(flagName, path string) ([]string, error) {
	keys, err := jobs.ReadKeys(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flagName, err)
	}
	return keys, nil
}

// splitList splits a comma-separated list, dropping blanks.
func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}
