package remote

import (
	"encoding/json"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/graphcd/graphcd/reposerver"
	"github.com/graphcd/graphcd/reposerver/gittree"
)

// ServiceName is the fully qualified gRPC service name, also used as the
// health-check service name.
const ServiceName = "graphcd.reposerver.v1.RepoServer"

// Full method names of the RepoServer service.
const (
	MethodGenerateManifests = "/" + ServiceName + "/GenerateManifests"
	MethodResolveRevision   = "/" + ServiceName + "/ResolveRevision"
	MethodListRefs          = "/" + ServiceName + "/ListRefs"
	MethodGetAppDetails     = "/" + ServiceName + "/GetAppDetails"
	MethodTestRepository    = "/" + ServiceName + "/TestRepository"
	MethodListCommits       = "/" + ServiceName + "/ListCommits"
	MethodMatchTree         = "/" + ServiceName + "/MatchTree"
)

// DefaultMaxMessageSize bounds one request or response when options leave
// it unset: rendered applications of thousands of objects fit.
const DefaultMaxMessageSize = 100 << 20

// repoRequest carries the arguments of the methods that take a repository.
type repoRequest struct {
	Repo     reposerver.Repository `json:"repo"`
	Revision string                `json:"revision,omitempty"`
}

// listCommitsRequest carries the arguments of ListCommits.
type listCommitsRequest struct {
	Repo     reposerver.Repository `json:"repo"`
	Revision string                `json:"revision,omitempty"`
	Limit    int                   `json:"limit"`
}

// matchTreeRequest carries the arguments of MatchTree.
type matchTreeRequest struct {
	Repo     reposerver.Repository `json:"repo"`
	Revision string                `json:"revision,omitempty"`
	Request  gittree.Request       `json:"request"`
}

// revisionResponse is the answer of ResolveRevision.
type revisionResponse struct {
	Revision string `json:"revision"`
}

// emptyMessage is the answer of TestRepository.
type emptyMessage struct{}

// jsonCodec encodes the RepoServer messages as JSON. Clients force it per
// call; the server uses wireCodec, which also speaks protobuf.
type jsonCodec struct{}

func (jsonCodec) Name() string { return "json" }

func (jsonCodec) Marshal(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode %T: %w", v, err)
	}
	return b, nil
}

func (jsonCodec) Unmarshal(data []byte, v any) error {
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("decode %T: %w", v, err)
	}
	return nil
}

// wireCodec is the server's codec: protobuf for protobuf messages (the
// health service, so standard probes work), JSON for everything else.
// A server-wide codec is needed because forcing one replaces the registry
// lookup for every service on the server.
type wireCodec struct{}

func (wireCodec) Name() string { return "proto" }

func (wireCodec) Marshal(v any) ([]byte, error) {
	if m, ok := v.(proto.Message); ok {
		return proto.Marshal(m)
	}
	return jsonCodec{}.Marshal(v)
}

func (wireCodec) Unmarshal(data []byte, v any) error {
	if m, ok := v.(proto.Message); ok {
		return proto.Unmarshal(data, m)
	}
	return jsonCodec{}.Unmarshal(data, v)
}
