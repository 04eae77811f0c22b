package etcdtest

import (
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	"go.etcd.io/etcd/server/v3/embed"
)

// envServer carries a member's configuration to the re-executed process.
const envServer = "LEASEWRAP_ETCDTEST_SERVER"

// memberConfig is one member, as the server process needs it.
type memberConfig struct {
	Name           string
	Dir            string
	ClientURL      string
	PeerURL        string
	InitialCluster string
	ClusterToken   string
	TLS            *TLSFiles
}

// TLSFiles are PEM files for a TLS client listener.
type TLSFiles struct {
	CA, Cert, Key string
	// ClientCertAuth requires clients to present a certificate.
	ClientCertAuth bool
	// ClientCert and ClientKey are a client certificate the CA signed.
	ClientCert, ClientKey string
}

// Serve runs an etcd member if this process was started as one, and never
// returns then; otherwise it returns at once. Call it first in TestMain.
func Serve() {
	raw := os.Getenv(envServer)
	if raw == "" {
		return
	}
	var mc memberConfig
	if err := json.Unmarshal([]byte(raw), &mc); err != nil {
		fmt.Fprintf(os.Stderr, "etcdtest: bad %s: %v\n", envServer, err)
		os.Exit(2)
	}
	cfg := embed.NewConfig()
	cfg.Name = mc.Name
	cfg.Dir = mc.Dir
	cfg.TickMs = 10
	cfg.ElectionMs = 100
	// bcrypt's minimum cost (etcd's own tests use it): at the default
	// cost, checking a password takes long enough on a loaded machine that
	// an authenticating client misses its 2 s dial timeout (exit 69).
	cfg.BcryptCost = 4
	cfg.LogLevel = "fatal"
	cfg.LogOutputs = []string{"stderr"}
	cu, _ := url.Parse(mc.ClientURL)
	pu, _ := url.Parse(mc.PeerURL)
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*cu}, []url.URL{*cu}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*pu}, []url.URL{*pu}
	cfg.InitialCluster = mc.InitialCluster
	cfg.InitialClusterToken = mc.ClusterToken
	if mc.TLS != nil {
		cfg.ClientTLSInfo = transport.TLSInfo{CertFile: mc.TLS.Cert, KeyFile: mc.TLS.Key, TrustedCAFile: mc.TLS.CA, ClientCertAuth: mc.TLS.ClientCertAuth}
	}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "etcdtest: start %s: %v\n", mc.Name, err)
		os.Exit(1)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	// A test binary killed by a timeout cannot clean up: a server whose
	// parent is gone (reparented) exits by itself.
	parent := os.Getppid()
	go func() {
		for range time.Tick(200 * time.Millisecond) {
			if os.Getppid() != parent {
				os.Exit(3)
			}
		}
	}()
	select {
	case <-e.Server.ReadyNotify():
		fmt.Println("READY")
	case err := <-e.Err():
		fmt.Fprintf(os.Stderr, "etcdtest: %s: %v\n", mc.Name, err)
		os.Exit(1)
	case <-sig:
		os.Exit(0)
	}
	select {
	case err := <-e.Err():
		fmt.Fprintf(os.Stderr, "etcdtest: %s: %v\n", mc.Name, err)
		os.Exit(1)
	case <-sig:
		e.Close()
		os.Exit(0)
	}
}

// freePort returns a loopback port that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
