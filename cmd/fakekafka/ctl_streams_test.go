package main

import (
	"reflect"
	"testing"

	"github.com/fakekafka/fakekafka/api"
)

// A streams member's tasks in `fakekafka ctl groups`: every active task by
// subtopology, standby and warm-up tasks only when there are some.
func TestCtlStreamsTasks(t *testing.T) {
	got := streamsTasks(api.StreamsTasks{Active: map[string][]int32{"1": {0, 2}, "0": {1}}, Standby: map[string][]int32{"1": {1}}})
	if want := []string{"active=0:1;1:0,2", "standby=1:1"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if got := streamsTasks(api.StreamsTasks{}); !reflect.DeepEqual(got, []string{"active="}) {
		t.Fatalf("no tasks: %v", got)
	}
}
