package server

// UpdateFeatures, versions 0-2 (KIP-584, KIP-1022): validated against the
// feature levels of features.go exactly as Kafka 4.4's controller
// validates them, in its order: an unknown upgrade type, a negative level,
// a feature or level the controller does not support, a downgrade asked
// as an upgrade (or an upgrade asked as a downgrade), any metadata.version
// downgrade, a kraft.version downgrade. The first failing update fails the
// whole request with INVALID_UPDATE_VERSION and Kafka's message; nothing
// is applied. ValidateOnly (v1+) stops there.
//
// Applied, transaction.version changes what ApiVersions finalizes and which
// transaction rules (KIP-890 at 2) the cluster runs. The other levels are
// fixed by what fakekafka models, so an update that would change one is
// refused with INVALID_UPDATE_VERSION and a message saying so (an update to
// the current level succeeds). v0-1 list each updated feature in Results
// (error NONE, message "NONE" as Kafka words it); v2 lists none. Needs
// ALTER on the cluster: CLUSTER_AUTHORIZATION_FAILED at the top otherwise.

import (
	"fmt"
	"strings"

	"github.com/fakekafka/fakekafka/authorizer"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Kafka's FeatureUpdate.UpgradeType codes.
const (
	upgradeTypeUpgrade         = 1
	upgradeTypeSafeDowngrade   = 2
	upgradeTypeUnsafeDowngrade = 3
)

// controllerNodeName is how the controller names itself in its messages:
// Kafka's "Local controller 100" is its node id.
func (c *Cluster) controllerNodeName() string {
	return fmt.Sprintf("Local controller %d", c.controller())
}

func (cn *conn) handleUpdateFeatures(req *kmsg.UpdateFeaturesRequest) (kmsg.Response, error) {
	c := cn.b.c
	resp := req.ResponseKind().(*kmsg.UpdateFeaturesResponse)
	if !cn.allowedCluster(authorizer.OpAlter) {
		resp.ErrorCode = errClusterAuth
		return resp, nil
	}
	c.features.mu.Lock()
	defer c.features.mu.Unlock()
	var apply []kmsg.UpdateFeaturesRequestFeatureUpdate
	for _, u := range req.FeatureUpdates {
		typ := u.UpgradeType
		if req.Version == 0 {
			typ = upgradeTypeUpgrade
			if u.AllowDowngrade {
				typ = upgradeTypeSafeDowngrade
			}
		}
		msg := c.checkFeatureUpdate(u.Feature, u.MaxVersionLevel, typ)
		if msg == "" && !req.ValidateOnly && u.Feature != transactionVersionFeature && u.MaxVersionLevel != c.finalizedLevel(u.Feature) {
			msg = "fakekafka cannot change this feature's level: only transaction.version can change at runtime."
		}
		if msg != "" {
			if msg[0] != 0 { // Kafka's invalidUpdateVersion
				msg = fmt.Sprintf("Invalid update version %d for feature %s. %s", u.MaxVersionLevel, u.Feature, msg)
			}
			full := "The update failed for all features since the following feature had an error: " + strings.TrimPrefix(msg, "\x00")
			resp.ErrorCode, resp.ErrorMessage = kerr.InvalidUpdateVersion.Code, &full
			cn.b.c.log.Info("UpdateFeatures refused", "feature", u.Feature, "level", u.MaxVersionLevel, "reason", msg)
			return resp, nil
		}
		apply = append(apply, u)
	}
	if !req.ValidateOnly {
		for _, u := range apply {
			if u.Feature == transactionVersionFeature && u.MaxVersionLevel != c.finalizedLevel(u.Feature) {
				c.features.txn.Store(int32(u.MaxVersionLevel) + 1)
				c.features.epoch.Add(1)
				c.log.Info("feature level changed", "feature", u.Feature, "level", u.MaxVersionLevel)
				c.saveMeta()
			}
		}
	}
	if req.Version < 2 {
		for _, u := range req.FeatureUpdates {
			r := kmsg.NewUpdateFeaturesResponseResult()
			r.Feature, r.ErrorMessage = u.Feature, kmsg.StringPtr("NONE")
			resp.Results = append(resp.Results, r)
		}
	}
	return resp, nil
}

// checkFeatureUpdate is Kafka 4.4's FeatureControlManager check of one
// update: "" when it is valid, else the reason. A reason starting with a
// NUL byte is the whole message (Kafka's metadata.version errors); others
// follow "Invalid update version N for feature F.".
func (c *Cluster) checkFeatureUpdate(name string, level int16, typ int8) string {
	if typ < upgradeTypeUpgrade || typ > upgradeTypeUnsafeDowngrade {
		return "The controller does not support the given upgrade type."
	}
	current := c.finalizedLevel(name)
	if level < 0 {
		return "A feature version cannot be less than 0."
	}
	f, known := lookupFeature(name)
	if name == transactionVersionFeature && c.transactionVersion() < 0 {
		known = false // a cluster from before KIP-890 (Config.TransactionVersion -1)
	}
	if level > 0 {
		switch {
		case !known:
			return c.controllerNodeName() + " does not support this feature."
		case level < f.min || level > f.max:
			return fmt.Sprintf("%s only supports versions %d-%d", c.controllerNodeName(), f.min, f.max)
		}
	}
	switch {
	case level < current && typ == upgradeTypeUpgrade:
		return "Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade."
	case level > current && typ != upgradeTypeUpgrade:
		return "Can't downgrade to a newer version."
	}
	switch name {
	case metadataVersionFeature:
		if level < current {
			reason := "Refusing to perform the requested downgrade because it might delete metadata information."
			if typ == upgradeTypeUnsafeDowngrade {
				reason = "Unsafe metadata downgrade is not supported in this version."
			}
			// Kafka words this one without the "Invalid update version" prefix.
			return "\x00" + fmt.Sprintf("Unsupported metadata.version downgrade from %d to %d. %s", current, level, reason)
		}
		return ""
	case kraftVersionFeature:
		if typ != upgradeTypeUpgrade && level != current {
			return "Can't downgrade the version of this feature."
		}
		return ""
	}
	if !known {
		return fmt.Sprintf("Feature %s not found.", name)
	}
	return ""
}
