package argo

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/perfdag/perfdag/engine/plan"
)

// A cell with clients: N > 1 runs as a DAG template holding the slice's locks: N client pods
// (daemons, `perfdag shard --listen`) started together and, once all listen, the slice's run
// task, which drives them over TCP (`perfdag run ... --clients-at ip:port,...`). The pods stay
// up for the whole slice, each point measured by all of them, and end with it; the endpoint's
// mutex is held from the first client pod to the last point.

// ShardPort is the port a client pod listens on.
const ShardPort = 7070

// ShardTokenEnv is the variable (and the Secret's key) holding the token the run task proves
// to its client pods; steps/measure/shard reads the same name.
const ShardTokenEnv = "PERFDAG_SHARD_TOKEN"

// ShardClientTemplate names the daemon template of a client pod.
const ShardClientTemplate = "shard-client"

// clientTemplates makes the DAG of a sharded slice (named tn), its run template and, once,
// the client pods' template.
func clientTemplates(p *plan.Plan, s *Slice, tn string, locks []Mutex, env []EnvVar, o Options, done map[string]bool) ([]Template, error) {
	spec := p.Campaign.Spec
	for _, e := range s.Endpoints {
		if strings.HasPrefix(spec.Endpoints[e].URL, "sim://") {
			return nil, fmt.Errorf("export: cell %s splits its points over %d client pods, which cannot reach endpoint %s's simulator (a sim:// endpoint runs inside the run task's pod); "+
				"serve the simulator (perfdag sim --addr 0.0.0.0:8000) and give its address as the endpoint's url, or remove clients:", s.Cell, s.Clients, e)
		}
	}
	env = append(append([]EnvVar(nil), env...), EnvVar{Name: ShardTokenEnv, ValueFrom: &EnvSource{SecretKeyRef: &SecretKeyRef{Name: o.Secret, Key: ShardTokenEnv}}})
	file := path.Join(inputMount, o.CampaignFile)
	run := tn + "-run"
	dag := &DAG{}
	var deps, addrs []string
	for k := range s.Clients {
		name := "client-" + strconv.Itoa(k)
		dag.Tasks = append(dag.Tasks, Task{Name: name, Template: ShardClientTemplate, Arguments: Arguments{Parameters: []Param{}}})
		deps = append(deps, name)
		addrs = append(addrs, fmt.Sprintf("{{tasks.%s.ip}}:%d", name, ShardPort))
	}
	dag.Tasks = append(dag.Tasks, Task{Name: "run", Template: run, Dependencies: deps, Arguments: Arguments{Parameters: []Param{
		{Name: "only", Value: "{{inputs.parameters.only}}"}, {Name: "clients", Value: strings.Join(addrs, ",")}}}})
	out := []Template{
		// A point that failed with a client fails the run task (perfdag run --clients-at exits
		// 1: a dead pod stays dead, and Argo 3 reports a failed daemon as succeeded), so the
		// DAG fails; its retry starts new pods and a run task that resumes, measuring again
		// the points that failed. The run task has no retry of its own: a retry needs pods.
		{Name: tn, Inputs: &Inputs{Parameters: []Param{{Name: "only"}}}, Synchronization: synchronization(locks), RetryStrategy: retry(o), DAG: dag},
		{Name: run, Inputs: &Inputs{Parameters: []Param{{Name: "only"}, {Name: "clients"}},
			Artifacts: []Artifact{{Name: "campaign", Path: file, Raw: &Raw{Data: string(o.Source)}}}},
			Container: sliceContainer(file, env, o, "--clients-at", "{{inputs.parameters.clients}}")},
	}
	if !done[ShardClientTemplate] {
		done[ShardClientTemplate] = true
		out = append(out, Template{Name: ShardClientTemplate, Daemon: true, Container: &Container{
			Image: o.Image, Command: []string{"/perfdag"}, Args: []string{"shard", "--listen", ":" + strconv.Itoa(ShardPort)},
			Env: env, VolumeMounts: []VolumeMount{{Name: volumeName, MountPath: CampaignsMount}},
			Ports:          []ContainerPort{{Name: "shard", ContainerPort: ShardPort}},
			ReadinessProbe: &Probe{TCPSocket: &TCPSocket{Port: "shard"}, PeriodSeconds: 1},
		}})
	}
	return out, nil
}
