package schema

import "errors"

func parseProtobuf(text string, deps map[string]string) (Parsed, error) {
	return nil, errors.New("protobuf schemas: not built yet")
}
