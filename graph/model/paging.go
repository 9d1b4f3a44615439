package model

import (
	"encoding/base64"
	"errors"
	"slices"
	"strings"
)

// ErrBadCursor is returned for an `after` graphcd did not issue.
var ErrBadCursor = errors.New("invalid cursor")

// Connection is a page of a short list ordered by a unique string key
// (projects, clusters, repositories), cut by First and After like the
// application connection.
type Connection[T any] struct {
	items    []T
	keys     []string
	total    int
	previous bool
	next     bool
}

// Edge is an item with its cursor.
type Edge[T any] struct {
	Cursor string
	Node   T
}

// Page returns the page of all (sorted by key) after the item whose key
// the cursor after names, at most first long.
func Page[T any](all []T, key func(T) string, first int, after string) (*Connection[T], error) {
	start := 0
	if after != "" {
		b, err := base64.RawURLEncoding.DecodeString(after)
		if err != nil || len(after) > maxIDLen {
			return nil, ErrBadCursor
		}
		k := string(b)
		start, _ = slices.BinarySearchFunc(all, k, func(item T, k string) int {
			if strings.Compare(key(item), k) <= 0 {
				return -1
			}
			return 1
		})
	}
	end := min(start+max(first, 0), len(all))
	c := &Connection[T]{items: all[start:end], total: len(all), previous: start > 0, next: end < len(all)}
	for _, item := range c.items {
		c.keys = append(c.keys, base64.RawURLEncoding.EncodeToString([]byte(key(item))))
	}
	return c, nil
}

// Edges returns the items with their cursors.
func (c *Connection[T]) Edges() []Edge[T] {
	out := make([]Edge[T], len(c.items))
	for i, item := range c.items {
		out[i] = Edge[T]{Cursor: c.keys[i], Node: item}
	}
	return out
}

// Nodes returns the items.
func (c *Connection[T]) Nodes() []T { return c.items }

// PageInfo says where the page sits.
func (c *Connection[T]) PageInfo() PageInfo {
	p := PageInfo{HasNextPage: c.next, HasPreviousPage: c.previous}
	if n := len(c.keys); n > 0 {
		p.StartCursor, p.EndCursor = &c.keys[0], &c.keys[n-1]
	}
	return p
}

// TotalCount is the length of the whole list.
func (c *Connection[T]) TotalCount() int { return c.total }

// The connections of the schema.
type (
	ProjectConnection    = Connection[Project]
	ProjectEdge          = Edge[Project]
	ClusterConnection    = Connection[Cluster]
	ClusterEdge          = Edge[Cluster]
	RepositoryConnection = Connection[Repository]
	RepositoryEdge       = Edge[Repository]

	NotificationDeliveryConnection = Connection[NotificationDelivery]
	NotificationDeliveryEdge       = Edge[NotificationDelivery]
)
