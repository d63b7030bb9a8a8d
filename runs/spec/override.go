package spec

import (
	"errors"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// Overrides are what kiln refine changes in a stored spec.
type Overrides struct {
	Name       string
	Rounds     int      // refinement.rounds
	Categories []string // refinement.categories, when given
	MaxTasks   int      // budgets.tasks, when >= 0
	MaxTokens  int64    // budgets.tokens, when >= 0
}

// Apply rewrites spec YAML: name, refinement.rounds and .categories (when
// given), budgets (when given, >= 0). Comments and layout are kept.
func (o Overrides) Apply(src []byte) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("spec is not a mapping")
	}
	root := doc.Content[0]
	setScalar(root, []string{"name"}, o.Name, "!!str")
	setScalar(root, []string{"refinement", "rounds"}, fmt.Sprint(o.Rounds), "!!int")
	if len(o.Categories) > 0 {
		seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
		for _, c := range o.Categories {
			seq.Content = append(seq.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: c})
		}
		setNode(root, []string{"refinement", "categories"}, seq)
	}
	if o.MaxTasks >= 0 {
		setScalar(root, []string{"budgets", "tasks"}, fmt.Sprint(o.MaxTasks), "!!int")
	}
	if o.MaxTokens >= 0 {
		setScalar(root, []string{"budgets", "tokens"}, fmt.Sprint(o.MaxTokens), "!!int")
	}
	out, err := yaml.Marshal(&doc)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func setScalar(m *yaml.Node, path []string, value, tag string) {
	setNode(m, path, &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: value})
}

// setNode sets path in mapping m to v, creating block mappings on the way
// (a flow mapping stays flow).
func setNode(m *yaml.Node, path []string, v *yaml.Node) {
	for m.Kind == yaml.AliasNode && m.Alias != nil {
		m = m.Alias
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == path[0] {
			if len(path) == 1 {
				m.Content[i+1] = v
				return
			}
			child := m.Content[i+1]
			if child.Kind != yaml.MappingNode {
				child = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Style: m.Content[i+1].Style & yaml.FlowStyle}
				m.Content[i+1] = child
			}
			setNode(child, path[1:], v)
			return
		}
	}
	key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: path[0]}
	if len(path) == 1 {
		m.Content = append(m.Content, key, v)
		return
	}
	child := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	m.Content = append(m.Content, key, child)
	setNode(child, path[1:], v)
}
