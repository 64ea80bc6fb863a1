package main

// fakekafka ctl verbs for the schema registry: its subjects, a subject's
// versions, one version's schema (GET /v1/schema-registry), and its fault
// rules (/v1/schema-registry/faults).

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/fakekafka/fakekafka/api"
)

// schemaVerb runs verb if it is this file's; handled is false otherwise.
func (c *ctl) schemaVerb(verb string, args []string) (handled bool, err error) {
	if verb != "schemas" && verb != "schema" {
		return false, nil
	}
	sub := "list"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		sub, args = args[0], args[1:]
	}
	fs := flag.NewFlagSet("schemas "+sub, flag.ContinueOnError)
	switch sub {
	case "list", "ls", "subjects":
		if _, err := c.args(fs, args, 0, 0, ""); err != nil {
			return true, err
		}
		var st api.SchemaRegistryState
		return true, c.show("GET", "/v1/schema-registry", nil, &st, func() { c.printSubjects(st) })
	case "show":
		pos, err := c.args(fs, args, 1, 2, "SUBJECT [VERSION|latest]")
		if err != nil {
			return true, err
		}
		version := -1 // the subject's versions
		if len(pos) == 2 && pos[1] != "latest" {
			n, err := strconv.Atoi(pos[1])
			if err != nil || n < 1 {
				return true, usagef("version %q is not a positive number or latest", pos[1])
			}
			version = n
		} else if len(pos) == 2 {
			version = 0 // the newest
		}
		var st api.SchemaRegistryState
		var missing error
		err = c.show("GET", "/v1/schema-registry", nil, &st, func() { missing = c.printSubject(st, pos[0], version) })
		if err == nil {
			err = missing
		}
		return true, err
	case "fault", "faults":
		return true, c.schemaFault(sub, args)
	}
	return true, usagef("unknown schemas verb %q (list, show, fault)", sub)
}

func (c *ctl) schemaFault(verb string, args []string) error {
	sub := "list"
	if verb == "fault" {
		if len(args) == 0 {
			return usagef("schemas fault wants add, list, rm or clear")
		}
		sub, args = args[0], args[1:]
	}
	fs := flag.NewFlagSet("schemas fault "+sub, flag.ContinueOnError)
	type list struct {
		Faults []api.SchemaRegistryFaultState `json:"faults"`
	}
	switch sub {
	case "list", "ls":
		if _, err := c.args(fs, args, 0, 0, ""); err != nil {
			return err
		}
		var l list
		return c.show("GET", "/v1/schema-registry/faults", nil, &l, func() { c.printSchemaFaults(l.Faults) })
	case "rm", "remove", "delete":
		pos, err := c.args(fs, args, 1, 1, "ID")
		if err != nil {
			return err
		}
		var f api.SchemaRegistryFaultState
		return c.show("DELETE", "/v1/schema-registry/faults/"+url.PathEscape(pos[0]), nil, &f, func() {
			c.printSchemaFaults([]api.SchemaRegistryFaultState{f})
		})
	case "clear":
		if _, err := c.args(fs, args, 0, 0, ""); err != nil {
			return err
		}
		var l list
		return c.show("DELETE", "/v1/schema-registry/faults", nil, &l, func() { c.printSchemaFaults(l.Faults) })
	case "add":
		var body api.SchemaRegistryFaultRequest
		fs.StringVar(&body.Method, "method", "", "")
		fs.StringVar(&body.Path, "path", "", "")
		fs.IntVar(&body.Status, "status", 0, "")
		fs.IntVar(&body.ErrorCode, "error-code", 0, "")
		fs.StringVar(&body.Message, "message", "", "")
		fs.IntVar(&body.Count, "count", 0, "")
		delay := fs.Duration("delay", 0, "")
		if _, err := c.args(fs, args, 0, 0, ""); err != nil {
			return err
		}
		body.DelayMillis = delay.Milliseconds()
		var f api.SchemaRegistryFaultState
		return c.show("POST", "/v1/schema-registry/faults", body, &f, func() { c.printSchemaFaults([]api.SchemaRegistryFaultState{f}) })
	}
	return usagef("unknown schemas fault verb %q (add, list, rm, clear)", sub)
}

func (c *ctl) printSubjects(st api.SchemaRegistryState) {
	fmt.Fprintf(c.out, "registry %s: compatibility %s, mode %s\n", st.URL, st.Compatibility, st.Mode)
	if len(st.Subjects) == 0 {
		fmt.Fprintln(c.out, "no subjects")
		return
	}
	tw := c.table("SUBJECT", "VERSIONS", "LATEST", "ID", "TYPE", "COMPATIBILITY", "MODE", "")
	for _, s := range st.Subjects {
		live := 0
		for _, v := range s.Versions {
			if !v.Deleted {
				live++
			}
		}
		latest := s.Versions[len(s.Versions)-1]
		deleted := ""
		if s.Deleted {
			deleted = "deleted"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\n", s.Subject, live, latest.Version, latest.ID, latest.SchemaType,
			or(s.Compatibility, "-"), or(s.Mode, "-"), deleted)
	}
	tw.Flush()
}

// printSubject prints subject's versions (version -1), or one version's
// schema (0: the newest).
func (c *ctl) printSubject(st api.SchemaRegistryState, subject string, version int) error {
	i := -1
	for j, s := range st.Subjects {
		if s.Subject == subject {
			i = j
		}
	}
	if i < 0 {
		return fmt.Errorf("no subject %q in the registry", subject)
	}
	s := st.Subjects[i]
	if version < 0 {
		tw := c.table("VERSION", "ID", "TYPE", "REFERENCES", "")
		for _, v := range s.Versions {
			var refs []string
			for _, r := range v.References {
				refs = append(refs, fmt.Sprintf("%s=%s/%d", r.Name, r.Subject, r.Version))
			}
			deleted := ""
			if v.Deleted {
				deleted = "deleted"
			}
			fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\n", v.Version, v.ID, v.SchemaType, or(strings.Join(refs, ","), "-"), deleted)
		}
		tw.Flush()
		return nil
	}
	v := s.Versions[len(s.Versions)-1]
	if version > 0 {
		found := false
		for _, w := range s.Versions {
			if w.Version == version {
				v, found = w, true
			}
		}
		if !found {
			return fmt.Errorf("subject %q has no version %d", subject, version)
		}
	}
	fmt.Fprintln(c.out, schemaText(v.Schema))
	return nil
}

// schemaText indents a JSON schema (Avro, JSON Schema) for reading and
// leaves any other text (Protobuf) as it is.
func schemaText(s string) string {
	var buf bytes.Buffer
	if json.Indent(&buf, []byte(s), "", "  ") == nil {
		return buf.String()
	}
	return strings.TrimRight(s, "\n")
}

func (c *ctl) printSchemaFaults(fs []api.SchemaRegistryFaultState) {
	tw := c.table("ID", "METHOD", "PATH", "STATUS", "ERROR_CODE", "COUNT", "DELAY", "HITS", "REMAINING")
	for _, f := range fs {
		remaining := strconv.Itoa(f.Remaining)
		if f.Remaining < 0 {
			remaining = "unlimited"
		}
		status, code := "-", "-"
		if f.Status != 0 {
			status, code = strconv.Itoa(f.Status), strconv.Itoa(f.ErrorCode)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%dms\t%d\t%s\n", f.ID, or(f.Method, "*"), or(f.Path, "*"), status, code,
			f.Count, f.DelayMillis, f.Hits, remaining)
	}
	tw.Flush()
}
