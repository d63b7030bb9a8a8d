package jobs

import (
	"fmt"
	"strings"
)

// ServerFlags name the settings (command-line flags) a ServerConfig is
// made from, for CheckFlags' errors: the addresses, the TLS mode, the
// certificate and key, the CA, and the nkey lists.
type ServerFlags struct {
	Addr, TLS, Cert, CA, Keys string
}

// CheckFlags validates c with its defaults applied, as StartServer will,
// and names in its error the settings to look at.
func (c ServerConfig) CheckFlags(f ServerFlags) error {
	c.Defaults()
	err := c.Validate()
	if err == nil {
		return nil
	}
	msg := err.Error()
	var hint string
	switch {
	case strings.Contains(msg, "TLS is off"):
		hint = f.TLS + " off"
	case strings.Contains(msg, "authentication"):
		hint = f.Keys
	case strings.Contains(msg, "TLSCA"):
		hint = f.CA
	case strings.Contains(msg, "certificate"), strings.Contains(msg, "key"):
		hint = f.Cert
	case strings.Contains(msg, "TLS mode"):
		hint = f.TLS
	default:
		hint = f.Addr
	}
	return fmt.Errorf("%w (see %s)", err, hint)
}
