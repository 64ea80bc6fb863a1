package matrix

import (
	"context"
	"fmt"
)

// ConfigOp is one change of an incrementalAlterConfigs: Op is SET, DELETE,
// APPEND or SUBTRACT.
type ConfigOp struct {
	Name  string  `json:"name"`
	Value *string `json:"value"`
	Op    string  `json:"op"`
}

// DescribedConfig is one config as the client's describeConfigs returns
// it; Synonyms are "name=value(SOURCE)".
type DescribedConfig struct {
	Name       string   `json:"name"`
	Value      *string  `json:"value"`
	Source     string   `json:"source"`
	ReadOnly   bool     `json:"readOnly"`
	Sensitive  bool     `json:"sensitive"`
	ConfigType string   `json:"configType"`
	Documented bool     `json:"documented"`
	Synonyms   []string `json:"synonyms"`
}

// Configs runs the adapter's configs operation: incrementalAlterConfigs
// of ops on the resource (GROUP, TOPIC or BROKER and its name), then
// describeConfigs of it. alterErr is the alter's error, if it failed.
func (p Process) Configs(ctx context.Context, bootstrap []string, resourceType, resourceName string, ops []ConfigOp) (alterErr *AdapterError, described []DescribedConfig, err error) {
	cfg := newAdapterConfig(bootstrap, "configs")
	cfg.ResourceType, cfg.ResourceName, cfg.ConfigOps = resourceType, resourceName, ops
	altered := false
	_, err = p.run(ctx, "configs", cfg, nil, func(l adapterLine) {
		switch l.Type {
		case "altered":
			altered, alterErr = true, l.Error
		case "configs":
			described = l.Configs
		}
	})
	if err == nil && !altered {
		err = fmt.Errorf("%s: no answer to the alter", p.name)
	}
	return alterErr, described, err
}
