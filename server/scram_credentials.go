package server

// DescribeUserScramCredentials and AlterUserScramCredentials (KIP-554):
// the SCRAM credentials of the SASL users. A client computes the salted
// password itself; the broker stores only the keys derived from it.
//
// With the authorizer, Describe needs DESCRIBE and Alter ALTER on the
// cluster. Denied, they answer as Kafka's error responses do: Describe
// CLUSTER_AUTHORIZATION_FAILED at the top and in one result per user asked
// (without the user's name, as Kafka leaves it out), and a denied request
// for every user (null Users) closes the connection, as Kafka's broker does
// when it fails to build that answer; Alter the error for each user named,
// once, sorted by name.

import (
	"fmt"
	"slices"

	"github.com/fakekafka/fakekafka/authorizer"

	"github.com/fakekafka/fakekafka/sasl"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// scramMechanismNames are the wire numbers of the SCRAM mechanisms.
var scramMechanismNames = map[int8]string{1: sasl.ScramSHA256, 2: sasl.ScramSHA512}

func scramMechanismNumber(name string) int8 {
	for n, m := range scramMechanismNames {
		if m == name {
			return n
		}
	}
	return 0
}

func (cn *conn) handleDescribeUserSCRAMCredentials(req *kmsg.DescribeUserSCRAMCredentialsRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.DescribeUserSCRAMCredentialsResponse)
	if !cn.allowedCluster(authorizer.OpDescribe) {
		if req.Users == nil {
			// Kafka 4.4 builds this error answer from the request's users;
			// with null users (every user) that fails and the broker
			// closes the connection instead of answering.
			cn.b.c.log.Info("DescribeUserScramCredentials for every user denied: closing the connection, as Kafka does",
				"broker", cn.b.id, "principal", cn.principal)
			return nil, errCloseConn
		}
		resp.ErrorCode = errClusterAuth
		for range req.Users {
			r := kmsg.NewDescribeUserSCRAMCredentialsResponseResult()
			r.ErrorCode = errClusterAuth
			resp.Results = append(resp.Results, r)
		}
		return resp, nil
	}
	resp.ErrorMessage = noMessage(req.Version, 0)
	u := cn.b.c.users
	u.mu.RLock()
	defer u.mu.RUnlock()
	describe := func(name string) kmsg.DescribeUserSCRAMCredentialsResponseResult {
		r := kmsg.NewDescribeUserSCRAMCredentialsResponseResult()
		r.User, r.ErrorMessage = name, noMessage(req.Version, 0)
		for _, mech := range sasl.ScramMechanisms {
			if cred, ok := u.scram[mech][name]; ok {
				info := kmsg.NewDescribeUserSCRAMCredentialsResponseResultCredentialInfo()
				info.Mechanism, info.Iterations = scramMechanismNumber(mech), int32(cred.Iterations)
				r.CredentialInfos = append(r.CredentialInfos, info)
			}
		}
		return r
	}
	if len(req.Users) == 0 { // null or empty: every user with a credential
		seen := map[string]bool{}
		for _, mech := range sasl.ScramMechanisms {
			for name := range u.scram[mech] {
				if !seen[name] {
					seen[name] = true
					resp.Results = append(resp.Results, describe(name))
				}
			}
		}
		return resp, nil
	}
	count := map[string]int{}
	for _, user := range req.Users {
		count[user.Name]++
	}
	done := map[string]bool{}
	for _, user := range req.Users {
		if done[user.Name] {
			continue
		}
		done[user.Name] = true
		r := describe(user.Name)
		switch {
		case count[user.Name] > 1:
			r.CredentialInfos = nil
			r.ErrorCode = kerr.DuplicateResource.Code
			r.ErrorMessage = kmsg.StringPtr("Cannot describe SCRAM credentials for the same user twice in a single request: " + user.Name)
		case len(r.CredentialInfos) == 0:
			r.ErrorCode = kerr.ResourceNotFound.Code
			r.ErrorMessage = kmsg.StringPtr("Attempt to describe a user credential that does not exist: " + user.Name)
		}
		resp.Results = append(resp.Results, r)
	}
	return resp, nil
}

// scramChange is one deletion (cred nil) or upsertion of a user.
type scramChange struct {
	mech string
	cred *sasl.ScramCredential
}

func (cn *conn) handleAlterUserSCRAMCredentials(req *kmsg.AlterUserSCRAMCredentialsRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.AlterUserSCRAMCredentialsResponse)
	c := cn.b.c
	if !cn.allowedCluster(authorizer.OpAlter) {
		var users []string
		for _, d := range req.Deletions {
			users = append(users, d.Name)
		}
		for _, up := range req.Upsertions {
			users = append(users, up.Name)
		}
		slices.Sort(users)
		for _, user := range slices.Compact(users) {
			resp.Results = append(resp.Results, kmsg.AlterUserSCRAMCredentialsResponseResult{User: user, ErrorCode: errClusterAuth, ErrorMessage: cn.notAuthorizedMsg()})
		}
		return resp, nil
	}
	var order []string
	changes := map[string][]scramChange{}
	failed := map[string]*kmsg.AlterUserSCRAMCredentialsResponseResult{}
	fail := func(user string, err *kerr.Error, msg string) {
		if failed[user] == nil {
			failed[user] = &kmsg.AlterUserSCRAMCredentialsResponseResult{User: user, ErrorCode: err.Code, ErrorMessage: kmsg.StringPtr(msg)}
		}
	}
	// Duplicates first: Kafka rejects them before looking further.
	pairs := map[[2]string]int{}
	for _, d := range req.Deletions {
		pairs[[2]string{d.Name, fmt.Sprint(d.Mechanism)}]++
	}
	for _, up := range req.Upsertions {
		pairs[[2]string{up.Name, fmt.Sprint(up.Mechanism)}]++
	}
	note := func(user string, mechNum int8, ch scramChange) {
		if _, ok := changes[user]; !ok {
			order = append(order, user)
			changes[user] = nil
		}
		if pairs[[2]string{user, fmt.Sprint(mechNum)}] > 1 {
			fail(user, kerr.DuplicateResource, "A user credential cannot be altered twice in the same request")
		}
		switch {
		case user == "":
			fail(user, kerr.UnacceptableCredential, "Username must not be empty")
		case ch.mech == "":
			fail(user, kerr.UnsupportedSaslMechanism, "Unknown SCRAM mechanism")
		}
		changes[user] = append(changes[user], ch)
	}
	u := c.users
	u.mu.Lock()
	for _, d := range req.Deletions {
		mech := scramMechanismNames[d.Mechanism]
		note(d.Name, d.Mechanism, scramChange{mech: mech})
		if _, ok := u.scram[mech][d.Name]; mech != "" && d.Name != "" && !ok {
			fail(d.Name, kerr.ResourceNotFound, "Attempt to delete a user credential that does not exist")
		}
	}
	for _, up := range req.Upsertions {
		mech := scramMechanismNames[up.Mechanism]
		var cred *sasl.ScramCredential
		if mech != "" {
			cr, err := sasl.ScramCredentialFromSalted(mech, up.SaltedPassword, up.Salt, int(up.Iterations))
			if err == nil {
				cred = &cr
			}
		}
		note(up.Name, up.Mechanism, scramChange{mech: mech, cred: cred})
		switch {
		case mech == "":
		case up.Iterations < sasl.MinIterations:
			fail(up.Name, kerr.UnacceptableCredential, "Too few iterations")
		case up.Iterations > sasl.MaxIterations:
			fail(up.Name, kerr.UnacceptableCredential, "Too many iterations")
		case len(up.SaltedPassword) == 0:
			// Kafka accepts an empty salt, but its HMAC refuses an empty
			// key, and the controller answers that exception.
			fail(up.Name, kerr.UnknownServerError, "Empty key")
		}
	}
	type applied struct{ user, reason, mech string }
	var events []applied
	for _, user := range order {
		if r := failed[user]; r != nil {
			resp.Results = append(resp.Results, *r)
			continue
		}
		for _, ch := range changes[user] {
			if ch.cred == nil {
				delete(u.scram[ch.mech], user)
				events = append(events, applied{user, "scram_deleted", ch.mech})
			} else {
				u.scram[ch.mech][user] = *ch.cred
				events = append(events, applied{user, "scram_upserted", ch.mech})
			}
		}
		resp.Results = append(resp.Results, kmsg.AlterUserSCRAMCredentialsResponseResult{User: user})
	}
	u.mu.Unlock()
	for _, a := range events {
		c.emit(EventSASLUserChanged, func(e *Event) { e.Reason, e.Detail = a.reason, "User:"+a.user+" "+a.mech })
	}
	if len(events) > 0 {
		c.saveMeta()
	}
	return resp, nil
}
