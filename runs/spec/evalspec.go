package spec

import (
	"errors"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// EvalOverrides turn a spec into the spec of one model's evaluation
// campaign (kiln eval): one endpoint, no refinement, a fixed number of
// samples per task.
type EvalOverrides struct {
	// Name is the evaluation campaign's name.
	Name string
	// Model is the models[].name kept; every other endpoint is removed.
	Model string
	// Samples sets tasks.samples_per_task when > 0.
	Samples int
}

// Apply rewrites spec YAML: name, models (only Model), refinement.rounds 0
// (refinement.synthesizer removed), tasks.samples_per_task. Comments and
// layout are kept.
func (o EvalOverrides) Apply(src []byte) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("spec is not a mapping")
	}
	root := doc.Content[0]
	models := mapValue(root, "models")
	if models == nil || models.Kind != yaml.SequenceNode {
		return nil, errors.New("models: not a list")
	}
	var kept *yaml.Node
	for _, m := range models.Content {
		if n := mapValue(m, "name"); n != nil && n.Value == o.Model {
			kept = m
		}
	}
	if kept == nil {
		return nil, fmt.Errorf("models: no endpoint named %q", o.Model)
	}
	models.Content = []*yaml.Node{kept}
	setScalar(root, []string{"name"}, o.Name, "!!str")
	setScalar(root, []string{"refinement", "rounds"}, "0", "!!int")
	if r := mapValue(root, "refinement"); r != nil {
		deleteKey(r, "synthesizer")
	}
	if o.Samples > 0 {
		setScalar(root, []string{"tasks", "samples_per_task"}, fmt.Sprint(o.Samples), "!!int")
	}
	return yaml.Marshal(&doc)
}

// mapValue is key's value in mapping m, or nil.
func mapValue(m *yaml.Node, key string) *yaml.Node {
	for m != nil && m.Kind == yaml.AliasNode {
		m = m.Alias
	}
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// deleteKey removes key from mapping m.
func deleteKey(m *yaml.Node, key string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return
		}
	}
}
