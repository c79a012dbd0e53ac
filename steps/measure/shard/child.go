package shard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/measure/endpoint"
	"github.com/perfdag/perfdag/steps/measure/loadgen"
	"github.com/perfdag/perfdag/steps/measure/session"
	"github.com/perfdag/perfdag/steps/measure/sse"
)

// Serve is a child's side (`perfdag shard`): it reads its Spec from in, opens its session and
// connections, says ready, answers the coordinator's pings with its clock, waits for the
// agreed start, measures its part, writes its records to Spec.Records and says done. Any
// failure is reported on out and returned (the child then exits non-zero). When in closes —
// the coordinator died — it stops at once.
func Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	dec, w := json.NewDecoder(in), newLineWriter(out)
	err := serve(ctx, dec, w)
	if err != nil {
		_ = w.send(up{Error: err.Error()})
	}
	return err
}

func serve(ctx context.Context, dec *json.Decoder, w *lineWriter) error {
	var spec Spec
	if err := dec.Decode(&spec); err != nil {
		return fmt.Errorf("read the shard's spec: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ep := spec.Endpoint
	t := &engine.Task{Node: fmt.Sprintf("shard %d of %d", spec.Part.Index, spec.Of), Cell: &schema.Cell{ID: spec.Cell}, Load: spec.Load,
		Endpoint: &ep, EndpointKey: spec.EndpointKey, Dir: spec.Dir, BaseDir: spec.BaseDir,
		Env: &endpoint.Env{Endpoints: map[string]endpoint.Resolved{spec.EndpointKey: {BaseURL: spec.BaseURL}}}}
	s, err := session.Open(ctx, t, spec.Workload, spec.Salt)
	if err != nil {
		return err
	}
	defer s.Close()
	p := spec.Part
	cfg := loadgen.Config{Requests: p.Requests, Concurrency: p.Concurrency, Rate: p.Rate, Arrival: p.Arrival, Burstiness: p.Burstiness, Seed: p.Seed}
	var late int64
	ready := func(ctx context.Context) error {
		start, err := handshake(dec, w)
		if err != nil {
			return err
		}
		// the coordinator gone (its pipe closed) ends the child
		go func() {
			var m down
			for dec.Decode(&m) == nil {
			}
			cancel()
		}()
		if d := time.Duration(start - sse.Now()); d > 0 {
			if err := session.Pause(ctx, d); err != nil {
				return err
			}
		}
		late = sse.Now() - start
		return nil
	}
	progress := func(pr loadgen.Progress) { _ = w.send(up{Progress: &Progress{Done: pr.Done, Errors: pr.Errors}}) }
	recs, err := s.LoadShard(ctx, spec.Phase, cfg, session.Shard{From: p.From, Ready: ready}, progress)
	if err != nil {
		return fmt.Errorf("client %d of %d: %w", p.Index, spec.Of, err)
	}
	if _, err := campaigndir.WriteLines(spec.Dir, spec.Records, recs); err != nil {
		return err
	}
	wd := s.Warmed()
	return w.send(up{Done: &Done{Records: len(recs), StartLateNs: late, ClientBound: s.ClientBound(), WarmOpened: wd.Opened, WarmConnect: wd.ConnectNs}})
}

// handshake says ready, answers pings with this process's clock, and returns the start the
// coordinator sets (on this clock).
func handshake(dec *json.Decoder, w *lineWriter) (int64, error) {
	if err := w.send(up{Ready: true}); err != nil {
		return 0, err
	}
	for {
		var m down
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return 0, errors.New("the coordinator closed the pipe before the start")
			}
			return 0, fmt.Errorf("read from the coordinator: %w", err)
		}
		switch {
		case m.Ping != nil:
			if err := w.send(up{Pong: m.Ping, NowNs: sse.Now()}); err != nil {
				return 0, err
			}
		case m.StartNs != nil:
			return *m.StartNs, nil
		}
	}
}
