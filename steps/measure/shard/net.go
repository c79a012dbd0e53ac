package shard

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"time"
)

// TokenEnv is the variable holding the secret a listening client and its coordinator share
// (on Argo, a key of the workflow's Secret): a peer that cannot prove it knows the token is
// refused before it can hand the client a spec (an endpoint to load with the client's API key,
// a file to write).
const TokenEnv = "PERFDAG_SHARD_TOKEN"

// authTimeout bounds a peer's handshake: one that connects and stays silent must not keep the
// listener from its coordinator (the listener serves one connection at a time).
const authTimeout = 10 * time.Second

// challenge is the listener's first line; answer is the coordinator's reply: the token's
// HMAC-SHA256 of the nonce, so the token never crosses the network and an answer overheard
// cannot be replayed on another connection.
type challenge struct {
	Nonce string `json:"nonce"`
}

type answer struct {
	MAC string `json:"mac"`
}

func mac(token, nonce string) string {
	h := hmac.New(sha256.New, []byte(token))
	h.Write([]byte(nonce))
	return hex.EncodeToString(h.Sum(nil))
}

// Listen is a client that stays up (`perfdag shard --listen ADDR`, an Argo pod): it accepts
// its coordinator's connections one at a time, and on each, after the peer proved it holds
// token, serves one point as Serve does on a pipe. A peer with a wrong token, or none within
// authTimeout, is refused and logged (its address, never the token). ready, if not nil, is
// called with the listening address once it listens. It returns when ctx ends.
func Listen(ctx context.Context, addr, token string, log io.Writer, ready func(net.Addr)) error {
	if token == "" {
		return fmt.Errorf("listen for a coordinator: %s is empty: a listening client needs the token its coordinator holds", TokenEnv)
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("listen for a coordinator: %w", err)
	}
	defer ln.Close()
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	if ready != nil {
		ready(ln.Addr())
	}
	for {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("accept a coordinator: %w", err)
		}
		if err := serveConn(ctx, conn, token); err != nil && !errors.Is(err, errProbe) {
			fmt.Fprintf(log, "perfdag shard: %s: %v\n", conn.RemoteAddr(), err)
		}
	}
}

// serveConn authenticates one connection and serves its point; the connection is closed after.
func serveConn(ctx context.Context, conn net.Conn, token string) error {
	defer conn.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { // the run interrupted ends the point
		<-ctx.Done()
		conn.Close()
	}()
	r := bufio.NewReader(conn)
	if err := accept(conn, r, token); err != nil {
		return err
	}
	return Serve(ctx, r, conn)
}

// errProbe is a connection closed without a byte: a readiness probe checking the port (every
// second on Argo), not worth a log line.
var errProbe = errors.New("closed without a word (a probe)")

// accept sends a fresh nonce and checks the peer's answer against token.
func accept(conn net.Conn, r *bufio.Reader, token string) error {
	_ = conn.SetDeadline(time.Now().Add(authTimeout))
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return fmt.Errorf("make a nonce: %w", err)
	}
	nonce := hex.EncodeToString(b[:])
	if err := newLineWriter(conn).send(challenge{Nonce: nonce}); err != nil {
		return err
	}
	line, err := r.ReadBytes('\n')
	// a probe leaving with the nonce unread resets the connection rather than closing it
	if len(line) == 0 && (errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)) {
		return errProbe
	}
	if err != nil {
		return fmt.Errorf("refused: no answer to the challenge: %w", err)
	}
	var a answer
	if json.Unmarshal(line, &a) != nil || !hmac.Equal([]byte(a.MAC), []byte(mac(token, nonce))) {
		return fmt.Errorf("refused: the peer does not hold the token (%s)", TokenEnv)
	}
	return conn.SetDeadline(time.Time{})
}

// dial connects to a listening client and answers its challenge.
func dial(ctx context.Context, addr, token string) (net.Conn, *bufio.Reader, error) {
	d := net.Dialer{Timeout: authTimeout} // a dead pod's address may never answer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, nil, err
	}
	_ = conn.SetDeadline(time.Now().Add(authTimeout))
	r := bufio.NewReader(conn)
	line, err := r.ReadBytes('\n')
	var c challenge
	if err == nil {
		err = json.Unmarshal(line, &c)
	}
	if err == nil && c.Nonce == "" {
		err = errors.New("no challenge")
	}
	if err != nil {
		conn.Close()
		return nil, nil, fmt.Errorf("read its challenge: %w", err)
	}
	if err := newLineWriter(conn).send(answer{MAC: mac(token, c.Nonce)}); err != nil {
		conn.Close()
		return nil, nil, err
	}
	_ = conn.SetDeadline(time.Time{})
	return conn, r, nil
}

// Remote is where a point's clients listen (`perfdag shard --listen`, one address per client,
// in client order) and the token they share.
type Remote struct {
	Addrs []string
	Token string
}

// ParseAddrs splits a comma-separated list of host:port addresses.
func ParseAddrs(s string) ([]string, error) {
	var out []string
	for _, a := range strings.Split(s, ",") {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		if _, _, err := net.SplitHostPort(a); err != nil {
			return nil, fmt.Errorf("client address %q: %w", a, err)
		}
		out = append(out, a)
	}
	return out, nil
}

type remoteKey struct{}

// WithRemote makes the points split over clients in ctx's run use the listening clients of r
// instead of starting child processes (cmd wires `perfdag run --clients-at`).
func WithRemote(ctx context.Context, r Remote) context.Context {
	return context.WithValue(ctx, remoteKey{}, r)
}

// RemoteOf is the listening clients WithRemote set, if any.
func RemoteOf(ctx context.Context) (Remote, bool) {
	r, ok := ctx.Value(remoteKey{}).(Remote)
	return r, ok && len(r.Addrs) > 0
}
