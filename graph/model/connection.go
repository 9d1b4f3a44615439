package model

import "github.com/graphcd/graphcd/api/v1alpha1"

// PageInfo says where a page sits in the whole list.
type PageInfo struct {
	HasNextPage     bool
	HasPreviousPage bool
	StartCursor     *string
	EndCursor       *string
}

// ApplicationConnection is a page of applications.
type ApplicationConnection struct {
	Page AppPage
}

// AppPage is the page of the application list a connection shows.
type AppPage struct {
	Items []*v1alpha1.Application
	// Cursor names Items[i].
	Cursor func(i int) string
	// EndCursor names the last item; empty when Items is.
	EndCursor                    string
	HasNextPage, HasPreviousPage bool
	// TotalCount is the number of apps the filter selects, on all pages.
	TotalCount int
}

// ApplicationEdge is an application with its cursor.
type ApplicationEdge struct {
	Cursor string
	Node   Application
}

// Edges returns the applications with their cursors.
func (c ApplicationConnection) Edges() []ApplicationEdge {
	out := make([]ApplicationEdge, len(c.Page.Items))
	for i, a := range c.Page.Items {
		out[i] = ApplicationEdge{Cursor: c.Page.Cursor(i), Node: Application{Application: a}}
	}
	return out
}

// Nodes returns the applications.
func (c ApplicationConnection) Nodes() []Application {
	out := make([]Application, len(c.Page.Items))
	for i, a := range c.Page.Items {
		out[i] = Application{Application: a}
	}
	return out
}

// PageInfo returns where the page sits.
func (c ApplicationConnection) PageInfo() PageInfo {
	p := PageInfo{HasNextPage: c.Page.HasNextPage, HasPreviousPage: c.Page.HasPreviousPage}
	if len(c.Page.Items) > 0 {
		start, end := c.Page.Cursor(0), c.Page.EndCursor
		p.StartCursor, p.EndCursor = &start, &end
	}
	return p
}

// TotalCount returns how many applications the filter selects.
func (c ApplicationConnection) TotalCount() int { return c.Page.TotalCount }
