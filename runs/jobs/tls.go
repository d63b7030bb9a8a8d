package jobs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// TLS modes (ServerConfig.TLS).
const (
	// TLSAuto: TLS when a listen address or a route is not loopback, or
	// a certificate is given; plain text on loopback otherwise.
	TLSAuto = "auto"
	// TLSOn: always TLS (a certificate is generated when none is given).
	TLSOn = "on"
	// TLSOff: never TLS; only loopback addresses are accepted.
	TLSOff = "off"
)

// The generated certificate files, in ServerConfig.StoreDir/tls.
const (
	TLSDir         = "tls"
	CACertFile     = "ca.pem"
	CAKeyFile      = "ca-key.pem"
	ServerCertFile = "server.pem"
	ServerKeyFile  = "server-key.pem"
)

// ensureCerts makes, or reuses, a self-signed CA and a server certificate
// signed by it in dir: ECDSA P-256, the server certificate valid for
// hosts (IP addresses or DNS names) as a server and as a client (cluster
// routes present it to each other). A CA already there (made by an
// earlier start, or copied from another node of the cluster so that the
// nodes trust each other) is kept; the server certificate is made again
// when it does not cover hosts, is not signed by the CA, or expires
// within 30 days. Key files are 0600.
func ensureCerts(dir string, hosts []string) (caPath, certPath, keyPath string, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", "", "", fmt.Errorf("tls: %w", err)
	}
	caPath, caKeyPath := filepath.Join(dir, CACertFile), filepath.Join(dir, CAKeyFile)
	certPath, keyPath = filepath.Join(dir, ServerCertFile), filepath.Join(dir, ServerKeyFile)
	ca, caKey, err := loadCA(caPath, caKeyPath)
	if err != nil {
		return "", "", "", err
	}
	if ca == nil {
		if ca, caKey, err = newCA(caPath, caKeyPath); err != nil {
			return "", "", "", err
		}
	}
	if certCovers(certPath, keyPath, ca, hosts) {
		return caPath, certPath, keyPath, nil
	}
	if err := newServerCert(certPath, keyPath, ca, caKey, hosts); err != nil {
		return "", "", "", err
	}
	return caPath, certPath, keyPath, nil
}

// loadCA reads the CA pair; (nil, nil, nil) when neither file exists.
func loadCA(certPath, keyPath string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	cb, cerr := os.ReadFile(certPath)
	kb, kerr := os.ReadFile(keyPath)
	switch {
	case errors.Is(cerr, os.ErrNotExist) && errors.Is(kerr, os.ErrNotExist):
		return nil, nil, nil
	case cerr != nil:
		return nil, nil, fmt.Errorf("tls: CA certificate %s: %w", certPath, cerr)
	case kerr != nil:
		return nil, nil, fmt.Errorf("tls: CA key %s (the CA certificate %s needs it to sign this node's certificate): %w", keyPath, certPath, kerr)
	}
	cert, err := parseCertPEM(cb)
	if err != nil {
		return nil, nil, fmt.Errorf("tls: CA certificate %s: %w", certPath, err)
	}
	key, err := parseKeyPEM(kb)
	if err != nil {
		return nil, nil, fmt.Errorf("tls: CA key %s: %w", keyPath, err)
	}
	if !cert.IsCA {
		return nil, nil, fmt.Errorf("tls: %s is not a CA certificate", certPath)
	}
	return cert, key, nil
}

func newCA(certPath, keyPath string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("tls: CA key: %w", err)
	}
	host, _ := os.Hostname()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "kiln NATS CA " + host, Organization: []string{"kiln"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("tls: CA certificate: %w", err)
	}
	if err := writeKey(keyPath, key); err != nil {
		return nil, nil, err
	}
	if err := writePEM(certPath, "CERTIFICATE", der, 0o644); err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	return cert, key, err
}

// certCovers reports whether the pair at certPath/keyPath is usable: it
// loads, is signed by ca, covers every host and lives 30 more days.
func certCovers(certPath, keyPath string, ca *x509.Certificate, hosts []string) bool {
	pair, err := tls.LoadX509KeyPair(certPath, keyPath)
	if err != nil {
		return false
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil || cert.CheckSignatureFrom(ca) != nil || time.Until(cert.NotAfter) < 30*24*time.Hour {
		return false
	}
	for _, h := range hosts {
		if cert.VerifyHostname(h) != nil {
			return false
		}
	}
	return true
}

func newServerCert(certPath, keyPath string, ca *x509.Certificate, caKey *ecdsa.PrivateKey, hosts []string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("tls: server key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "kiln NATS server", Organization: []string{"kiln"}},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().AddDate(2, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		// ClientAuth: cluster nodes present it to each other on routes.
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if h != "" {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("tls: server certificate: %w", err)
	}
	if err := writeKey(keyPath, key); err != nil {
		return err
	}
	return writePEM(certPath, "CERTIFICATE", der, 0o644)
}

// certHosts are the names a generated server certificate covers: the
// listen hosts (every interface address for an unspecified one), the host
// name, and loopback.
func certHosts(listen ...string) []string {
	hosts := []string{"127.0.0.1", "::1", "localhost"}
	if h, err := os.Hostname(); err == nil && h != "" {
		hosts = append(hosts, h)
	}
	for _, l := range listen {
		if l == "" {
			continue
		}
		if ip := net.ParseIP(l); ip != nil && ip.IsUnspecified() {
			if addrs, err := net.InterfaceAddrs(); err == nil {
				for _, a := range addrs {
					if n, ok := a.(*net.IPNet); ok {
						hosts = append(hosts, n.IP.String())
					}
				}
			}
			continue
		}
		hosts = append(hosts, l)
	}
	slices.Sort(hosts)
	return slices.Compact(hosts)
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return big.NewInt(time.Now().UnixNano())
	}
	return n
}

func writeKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return fmt.Errorf("tls: %s: %w", path, err)
	}
	return writePEM(path, "EC PRIVATE KEY", der, 0o600)
}

// writePEM writes atomically (temporary file, then rename).
func writePEM(path, typ string, der []byte, mode os.FileMode) error {
	tmp := path + ".tmp"
	b := pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
	if err := os.WriteFile(tmp, b, mode); err != nil {
		return fmt.Errorf("tls: %s: %w", path, err)
	}
	if err := os.Chmod(tmp, mode); err != nil {
		return fmt.Errorf("tls: %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("tls: %s: %w", path, err)
	}
	return nil
}

func parseCertPEM(b []byte) (*x509.Certificate, error) {
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "CERTIFICATE" {
		return nil, errors.New("no PEM certificate")
	}
	return x509.ParseCertificate(blk.Bytes)
}

func parseKeyPEM(b []byte) (*ecdsa.PrivateKey, error) {
	blk, _ := pem.Decode(b)
	if blk == nil {
		return nil, errors.New("no PEM key")
	}
	if k, err := x509.ParseECPrivateKey(blk.Bytes); err == nil {
		return k, nil
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return nil, err
	}
	ek, ok := k.(*ecdsa.PrivateKey)
	if !ok {
		return nil, errors.New("not an ECDSA key")
	}
	return ek, nil
}

// certPool reads PEM certificates from path.
func certPool(path, what string) (*x509.CertPool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", what, path, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("%s %s: no PEM certificate in it", what, path)
	}
	return pool, nil
}

// serverTLS builds the server's TLS configurations: for clients (mutual
// TLS when clientCA is given) and for cluster routes, where the nodes
// verify each other's certificates against peerCA both ways.
func serverTLS(certPath, keyPath, clientCA, peerCA string) (clients, routes *tls.Config, err error) {
	pair, err := tls.LoadX509KeyPair(certPath, keyPath)
	if err != nil {
		return nil, nil, fmt.Errorf("TLS certificate %s and key %s: %w", certPath, keyPath, err)
	}
	clients = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{pair}}
	if clientCA != "" {
		pool, err := certPool(clientCA, "client CA")
		if err != nil {
			return nil, nil, err
		}
		clients.ClientCAs, clients.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	routes = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{pair}}
	if peerCA != "" {
		pool, err := certPool(peerCA, "cluster CA")
		if err != nil {
			return nil, nil, err
		}
		routes.RootCAs, routes.ClientCAs, routes.ClientAuth = pool, pool, tls.RequireAndVerifyClientCert
	}
	return clients, routes, nil
}
