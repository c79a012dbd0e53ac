package argo

import (
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/perfdag/perfdag/engine/plan"
)

// podEnv is every pod's environment: the endpoints' API keys, the steps' token variables and a
// PostgreSQL lake's password, each from the Secret.
func podEnv(p *plan.Plan, o Options) []EnvVar {
	spec := p.Campaign.Spec
	var env []EnvVar
	seen := map[string]bool{}
	names := make([]string, 0, len(spec.Endpoints))
	for n := range spec.Endpoints {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if k := spec.Endpoints[n].APIKeyEnv; k != "" && !seen[k] {
			seen[k] = true
			env = append(env, EnvVar{Name: k, ValueFrom: &EnvSource{SecretKeyRef: &SecretKeyRef{Name: o.Secret, Key: k}}})
		}
	}
	var stepEnv []string
	for _, st := range p.Campaign.Steps {
		if st.Kind.SecretEnv != nil {
			for _, k := range st.Kind.SecretEnv(st.Params) {
				if k != "" && !seen[k] {
					seen[k] = true
					stepEnv = append(stepEnv, k)
				}
			}
		}
	}
	sort.Strings(stepEnv) // map order must not reorder the manifest
	for _, k := range stepEnv {
		env = append(env, EnvVar{Name: k, ValueFrom: &EnvSource{SecretKeyRef: &SecretKeyRef{Name: o.Secret, Key: k}}})
	}
	if pub := spec.Publish; pub != nil && (strings.HasPrefix(pub.Lake, "postgres://") || strings.HasPrefix(pub.Lake, "postgresql://")) && !seen[LakePasswordEnv] {
		// optional: a lake URL that carries its password, or a .pgpass in the image, needs none
		env = append(env, EnvVar{Name: LakePasswordEnv, ValueFrom: &EnvSource{SecretKeyRef: &SecretKeyRef{Name: o.Secret, Key: LakePasswordEnv, Optional: true}}})
	}
	return env
}

func sliceInputs(file string, o Options) *Inputs {
	return &Inputs{
		Parameters: []Param{{Name: "only"}},
		Artifacts:  []Artifact{{Name: "campaign", Path: file, Raw: &Raw{Data: string(o.Source)}}},
	}
}

// sliceContainer runs the slice's nodes: `perfdag run FILE --out DIR --slice --only-list ...`
// and the extra arguments.
func sliceContainer(file string, env []EnvVar, o Options, extra ...string) *Container {
	return &Container{
		Image:   o.Image,
		Command: []string{"/perfdag"},
		Args: append([]string{"run", file, "--out", path.Join(CampaignsMount, "{{workflow.name}}"), "--slice",
			"--only-list", "{{inputs.parameters.only}}"}, extra...),
		Env:          env,
		VolumeMounts: []VolumeMount{{Name: volumeName, MountPath: CampaignsMount}},
	}
}

func retry(o Options) *RetryStrategy {
	if o.Retries > 0 {
		return &RetryStrategy{Limit: strconv.Itoa(o.Retries), RetryPolicy: "Always"}
	}
	return nil
}
