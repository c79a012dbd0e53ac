// Package schema is perfdag's data contract: the campaign YAML types users author, the record
// types every step writes (point_v1, atlas_v1, tpm_v1, cost_v1, roofline_v1, campaign_v1,
// inference_perfbench_v1) and the JSON Schema editors complete against.
//
// It imports the standard library only, so every other package can depend on it.
package schema
