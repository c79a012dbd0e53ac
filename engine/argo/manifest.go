package argo

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/perfdag/perfdag/engine/plan"
)

// The manifest types below carry only the Argo fields the exporter writes (argoproj.io/v1alpha1,
// list forms `mutexes`/`schedules` valid on Argo >= 3.6 and the only ones on 4.x).

// Doc is a Workflow or CronWorkflow.
type Doc struct {
	APIVersion string   `yaml:"apiVersion" json:"apiVersion"`
	Kind       string   `yaml:"kind" json:"kind"`
	Metadata   Metadata `yaml:"metadata" json:"metadata"`
	Spec       any      `yaml:"spec" json:"spec"`
}

// Metadata is the object metadata.
type Metadata struct {
	Name         string            `yaml:"name,omitempty" json:"name,omitempty"`
	GenerateName string            `yaml:"generateName,omitempty" json:"generateName,omitempty"`
	Namespace    string            `yaml:"namespace,omitempty" json:"namespace,omitempty"`
	Labels       map[string]string `yaml:"labels,omitempty" json:"labels,omitempty"`
	Annotations  map[string]string `yaml:"annotations,omitempty" json:"annotations,omitempty"`
}

// CronSpec is a CronWorkflow's spec.
type CronSpec struct {
	Schedules               []string     `yaml:"schedules" json:"schedules"`
	Timezone                string       `yaml:"timezone,omitempty" json:"timezone,omitempty"`
	ConcurrencyPolicy       string       `yaml:"concurrencyPolicy" json:"concurrencyPolicy"`
	StartingDeadlineSeconds int64        `yaml:"startingDeadlineSeconds,omitempty" json:"startingDeadlineSeconds,omitempty"`
	WorkflowSpec            WorkflowSpec `yaml:"workflowSpec" json:"workflowSpec"`
}

// WorkflowSpec is a Workflow's spec.
type WorkflowSpec struct {
	Entrypoint         string           `yaml:"entrypoint" json:"entrypoint"`
	ServiceAccountName string           `yaml:"serviceAccountName,omitempty" json:"serviceAccountName,omitempty"`
	SecurityContext    *SecurityContext `yaml:"securityContext,omitempty" json:"securityContext,omitempty"`
	Volumes            []Volume         `yaml:"volumes" json:"volumes"`
	Templates          []Template       `yaml:"templates" json:"templates"`
}

// SecurityContext is the pods' security context: the image's non-root user, and fsGroup so
// the campaigns volume is writable by it.
type SecurityContext struct {
	RunAsNonRoot bool  `yaml:"runAsNonRoot" json:"runAsNonRoot"`
	RunAsUser    int64 `yaml:"runAsUser" json:"runAsUser"`
	RunAsGroup   int64 `yaml:"runAsGroup" json:"runAsGroup"`
	FSGroup      int64 `yaml:"fsGroup" json:"fsGroup"`
}

// ImageUser is the uid and gid the Dockerfile's image runs as.
const ImageUser = 65532

// Volume is a PVC-backed pod volume.
type Volume struct {
	Name                  string       `yaml:"name" json:"name"`
	PersistentVolumeClaim *ClaimSource `yaml:"persistentVolumeClaim" json:"persistentVolumeClaim"`
}

// ClaimSource names a claim.
type ClaimSource struct {
	ClaimName string `yaml:"claimName" json:"claimName"`
}

// Template is a DAG or container template.
type Template struct {
	Name            string           `yaml:"name" json:"name"`
	Inputs          *Inputs          `yaml:"inputs,omitempty" json:"inputs,omitempty"`
	Synchronization *Synchronization `yaml:"synchronization,omitempty" json:"synchronization,omitempty"`
	RetryStrategy   *RetryStrategy   `yaml:"retryStrategy,omitempty" json:"retryStrategy,omitempty"`
	// Daemon keeps the pod up while its DAG runs (a client of a point split over pods).
	Daemon    bool       `yaml:"daemon,omitempty" json:"daemon,omitempty"`
	DAG       *DAG       `yaml:"dag,omitempty" json:"dag,omitempty"`
	Container *Container `yaml:"container,omitempty" json:"container,omitempty"`
}

// Inputs of a template.
type Inputs struct {
	Parameters []Param    `yaml:"parameters,omitempty" json:"parameters,omitempty"`
	Artifacts  []Artifact `yaml:"artifacts,omitempty" json:"artifacts,omitempty"`
}

// Param is a named string parameter.
type Param struct {
	Name  string `yaml:"name" json:"name"`
	Value string `yaml:"value,omitempty" json:"value,omitempty"`
}

// Artifact is an input artifact with inline data.
type Artifact struct {
	Name string `yaml:"name" json:"name"`
	Path string `yaml:"path" json:"path"`
	Raw  *Raw   `yaml:"raw" json:"raw"`
}

// Raw is inline artifact data.
type Raw struct {
	Data string `yaml:"data" json:"data"`
}

// Synchronization holds the locks a template takes.
type Synchronization struct {
	Mutexes []Mutex `yaml:"mutexes" json:"mutexes"`
}

// Mutex is a namespace-wide lock.
type Mutex struct {
	Name string `yaml:"name" json:"name"`
}

// RetryStrategy retries a failed task; the retry resumes from checkpoints.
type RetryStrategy struct {
	Limit       string `yaml:"limit" json:"limit"` // IntOrString: the schema types it as string
	RetryPolicy string `yaml:"retryPolicy" json:"retryPolicy"`
}

// DAG is a DAG template body.
type DAG struct {
	Tasks []Task `yaml:"tasks" json:"tasks"`
}

// Task is one DAG task.
type Task struct {
	Name         string    `yaml:"name" json:"name"`
	Template     string    `yaml:"template" json:"template"`
	Dependencies []string  `yaml:"dependencies,omitempty" json:"dependencies,omitempty"`
	Arguments    Arguments `yaml:"arguments" json:"arguments"`
}

// Arguments of a task.
type Arguments struct {
	Parameters []Param `yaml:"parameters" json:"parameters"`
}

// Container is a container template body.
type Container struct {
	Image        string        `yaml:"image" json:"image"`
	Command      []string      `yaml:"command" json:"command"`
	Args         []string      `yaml:"args" json:"args"`
	Env          []EnvVar      `yaml:"env,omitempty" json:"env,omitempty"`
	VolumeMounts []VolumeMount `yaml:"volumeMounts" json:"volumeMounts"`
	// Ports and ReadinessProbe: a client pod is ready (its DAG's run task starts) once it listens.
	Ports          []ContainerPort `yaml:"ports,omitempty" json:"ports,omitempty"`
	ReadinessProbe *Probe          `yaml:"readinessProbe,omitempty" json:"readinessProbe,omitempty"`
}

// ContainerPort names a port the container listens on.
type ContainerPort struct {
	Name          string `yaml:"name" json:"name"`
	ContainerPort int    `yaml:"containerPort" json:"containerPort"`
}

// Probe is a readiness probe opening a TCP connection to a named port.
type Probe struct {
	TCPSocket     *TCPSocket `yaml:"tcpSocket" json:"tcpSocket"`
	PeriodSeconds int        `yaml:"periodSeconds,omitempty" json:"periodSeconds,omitempty"`
}

// TCPSocket names the port a probe connects to (by name: Argo's schema types the port as a
// string, which Kubernetes reads as a port name).
type TCPSocket struct {
	Port string `yaml:"port" json:"port"`
}

// EnvVar is an environment variable from a Secret.
type EnvVar struct {
	Name      string     `yaml:"name" json:"name"`
	ValueFrom *EnvSource `yaml:"valueFrom" json:"valueFrom"`
}

// EnvSource points at a Secret key.
type EnvSource struct {
	SecretKeyRef *SecretKeyRef `yaml:"secretKeyRef" json:"secretKeyRef"`
}

// SecretKeyRef is one key of one Secret.
type SecretKeyRef struct {
	Name     string `yaml:"name" json:"name"`
	Key      string `yaml:"key" json:"key"`
	Optional bool   `yaml:"optional,omitempty" json:"optional,omitempty"`
}

// LakePasswordEnv is the variable a PostgreSQL lake's password is read from (libpq's); tasks
// of a campaign publishing to PostgreSQL take it from the Secret's key of that name.
const LakePasswordEnv = "PGPASSWORD"

// VolumeMount mounts a volume.
type VolumeMount struct {
	Name      string `yaml:"name" json:"name"`
	MountPath string `yaml:"mountPath" json:"mountPath"`
}

// Overlap policies of schedule: mapped to Argo's concurrencyPolicy. Argo has no queue policy:
// `queue` becomes Allow — Argo starts the due run at once, its endpoint mutexes make its load
// wait for the running one's, and the two runs' tasks interleave (see Caveats).
var concurrency = map[string]string{"": "Forbid", "skip": "Forbid", "queue": "Allow", "replace": "Replace"}

// OutcomeTask names the workflow's last task (and its template): `perfdag status --check`
// on the campaign directory, failing the workflow when one run would have failed.
const OutcomeTask = "campaign-outcome"

// CaveatsAnnotation is the metadata annotation listing what the export could not map exactly.
const CaveatsAnnotation = "perfdag.dev/export-caveats"

func (o *Options) defaults() {
	if o.Image == "" {
		o.Image = "perfdag:latest"
	}
	if o.PVC == "" {
		o.PVC = "perfdag-campaigns"
	}
	if o.Secret == "" {
		o.Secret = "perfdag-api-keys"
	}
	if o.CampaignFile == "" {
		o.CampaignFile = "campaign.yaml"
	}
	if o.Retries == 0 {
		o.Retries = 2
	}
}

// Manifest builds the document Export encodes.
func Manifest(p *plan.Plan, o Options) (*Doc, error) {
	o.defaults()
	if err := Credentials(p.Campaign, o); err != nil {
		return nil, err
	}
	slices, err := Slices(p)
	if err != nil {
		return nil, err
	}
	spec := p.Campaign.Spec
	name := dnsName(spec.Campaign)
	wf := WorkflowSpec{
		Entrypoint:         "campaign",
		ServiceAccountName: o.ServiceAccount,
		SecurityContext:    &SecurityContext{RunAsNonRoot: true, RunAsUser: ImageUser, RunAsGroup: ImageUser, FSGroup: ImageUser},
		Volumes:            []Volume{{Name: volumeName, PersistentVolumeClaim: &ClaimSource{ClaimName: o.PVC}}},
	}
	dag := &DAG{}
	needed := map[string]bool{}
	for _, s := range slices {
		args := []Param{{Name: "only", Value: onlyArg(s.Nodes)}}
		dag.Tasks = append(dag.Tasks, Task{Name: s.Name, Template: templateName(s), Dependencies: s.Deps, Arguments: Arguments{Parameters: args}})
		for _, d := range s.Deps {
			needed[d] = true
		}
	}
	// The last task exits with the campaign's code: the slices succeed once they finished,
	// whatever their steps did, so that their dependents run as in one run.
	last := Task{Name: OutcomeTask, Template: OutcomeTask, Arguments: Arguments{Parameters: []Param{}}}
	for _, s := range slices {
		if !needed[s.Name] {
			last.Dependencies = append(last.Dependencies, s.Name)
		}
		if s.Name == OutcomeTask {
			return nil, fmt.Errorf("export: a step or cell is named %q, the name of the workflow's last task", OutcomeTask)
		}
	}
	dag.Tasks = append(dag.Tasks, last)
	wf.Templates = append(wf.Templates, Template{Name: "campaign", DAG: dag})
	ts, err := sliceTemplates(p, slices, o)
	if err != nil {
		return nil, err
	}
	wf.Templates = append(wf.Templates, ts...)
	wf.Templates = append(wf.Templates, Template{Name: OutcomeTask, Container: &Container{
		Image: o.Image, Command: []string{"/perfdag"},
		Args:         []string{"status", path.Join(CampaignsMount, "{{workflow.name}}"), "--check"},
		VolumeMounts: []VolumeMount{{Name: volumeName, MountPath: CampaignsMount}},
	}})
	meta := Metadata{Namespace: o.Namespace, Labels: map[string]string{
		"app.kubernetes.io/managed-by": "perfdag",
		"perfdag.dev/campaign":         name,
	}}
	if spec.Schedule == nil || o.Workflow {
		meta.GenerateName = name + "-"
		return &Doc{APIVersion: "argoproj.io/v1alpha1", Kind: "Workflow", Metadata: meta, Spec: wf}, nil
	}
	sc := spec.Schedule
	policy, ok := concurrency[sc.Overlap]
	if !ok {
		return nil, fmt.Errorf("export: schedule.overlap %q has no Argo concurrencyPolicy", sc.Overlap)
	}
	expr, tz := splitZone(sc.Cron, sc.Timezone)
	meta.Name = name
	if cav := Caveats(p, o); len(cav) > 0 {
		meta.Annotations = map[string]string{CaveatsAnnotation: strings.Join(cav, "\n")}
	}
	return &Doc{APIVersion: "argoproj.io/v1alpha1", Kind: "CronWorkflow", Metadata: meta, Spec: CronSpec{
		Schedules: []string{expr}, Timezone: tz, ConcurrencyPolicy: policy,
		StartingDeadlineSeconds: int64(sc.CatchupWindow.Seconds()), WorkflowSpec: wf,
	}}, nil
}

// splitZone moves a TZ=/CRON_TZ= prefix of the cron expression into the timezone (Argo
// prefixes CRON_TZ from spec.timezone itself, so a second prefix would not parse); the
// loader has refused an expression and a timezone: naming different zones. No zone is UTC,
// as perfdag schedule reads it — Argo's own default is the controller's local time.
func splitZone(expr, timezone string) (string, string) {
	f := strings.Fields(expr)
	if len(f) > 1 {
		for _, prefix := range []string{"TZ=", "CRON_TZ="} {
			if z, ok := strings.CutPrefix(f[0], prefix); ok {
				expr = strings.Join(f[1:], " ")
				if timezone == "" {
					timezone = z
				}
			}
		}
	}
	if timezone == "" {
		timezone = "UTC"
	}
	return expr, timezone
}

// Caveats lists what of the campaign's schedule the exported CronWorkflow does not do as
// `perfdag schedule` would; Export writes them as comments and an annotation, the CLI on
// stderr. Empty for a Workflow.
func Caveats(p *plan.Plan, o Options) []string {
	sc := p.Campaign.Spec.Schedule
	if sc == nil || o.Workflow {
		return nil
	}
	var out []string
	if sc.Overlap == "queue" {
		out = append(out, "schedule.overlap queue: Argo has no queue policy, so it is exported as concurrencyPolicy Allow — "+
			"a due run starts at once; its endpoint mutexes make its load wait for the running one's, "+
			"but the two runs' tasks interleave instead of the second starting after the first")
	}
	if sc.CatchupMax > 1 {
		out = append(out, fmt.Sprintf("schedule.catchup_max %d: Argo starts at most one missed run (within startingDeadlineSeconds)", sc.CatchupMax))
	}
	if sc.Baseline != "" || sc.OnRed != nil {
		out = append(out, "schedule.baseline/on_red: the exported runs are not diffed against a baseline and run no on_red hook "+
			"(perfdag schedule does both); diff a run with 'perfdag baseline diff --baseline NAME --current DIR'")
	}
	return out
}

// synchronization is nil for a template that takes no mutex (the schema wants a list when
// the key is there).
func synchronization(locks []Mutex) *Synchronization {
	if len(locks) == 0 {
		return nil
	}
	return &Synchronization{Mutexes: locks}
}

// onlyArg joins a slice's node ids into one parameter: newline-separated, split back into
// one --only per node by the container's argument list.
func onlyArg(nodes []string) string {
	out := ""
	for i, n := range nodes {
		if i > 0 {
			out += "\n"
		}
		out += n
	}
	return out
}

// templateName: slices share a template when they hold the same locks — cell slices that
// load the same endpoints ("load-<endpoints>"), cell slices that load none ("cell"), and
// campaign-scope slices, which also hold the directory's mutex ("analysis", or
// "campaign-load-<endpoints>").
func templateName(s *Slice) string {
	n := "load"
	switch {
	case s.Cell != "" && len(s.Endpoints) == 0:
		return "cell"
	case s.Cell == "" && len(s.Endpoints) == 0:
		return "analysis"
	case s.Cell == "":
		n = "campaign-load"
	}
	for _, e := range s.Endpoints {
		n += "-" + e
	}
	if s.Clients > 1 {
		n += "-clients-" + strconv.Itoa(s.Clients)
	}
	return dnsName(n)
}

// sliceTemplates makes one template per distinct lock set (and client count): a container
// running the slice, or for a cell split over client pods the DAG clientTemplates makes.
func sliceTemplates(p *plan.Plan, slices []*Slice, o Options) ([]Template, error) {
	spec := p.Campaign.Spec
	env := podEnv(p, o)
	file := path.Join(inputMount, o.CampaignFile)
	var out []Template
	done := map[string]bool{}
	for _, s := range slices {
		tn := templateName(s)
		if done[tn] {
			continue
		}
		done[tn] = true
		// Cell slices share the directory (each has its own journal, a file lock arbitrates
		// with campaign-scope slices); campaign-scope slices queue on one mutex rather than
		// each wait in a pod for the directory.
		var locks []Mutex
		if s.Cell == "" {
			locks = append(locks, Mutex{Name: "perfdag-dir-{{workflow.name}}"})
		}
		for _, e := range s.Endpoints {
			locks = append(locks, Mutex{Name: EndpointMutex(spec.Endpoints[e].URL)})
		}
		if s.Clients > 1 {
			ts, err := clientTemplates(p, s, tn, locks, env, o, done)
			if err != nil {
				return nil, err
			}
			out = append(out, ts...)
			continue
		}
		t := Template{
			Name:            tn,
			Inputs:          sliceInputs(file, o),
			Synchronization: synchronization(locks),
			Container:       sliceContainer(file, env, o),
			RetryStrategy:   retry(o),
		}
		out = append(out, t)
	}
	return out, nil
}
