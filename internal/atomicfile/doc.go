// Package atomicfile writes files so that readers see either the old content or
// the whole new content, never a half-written file: data goes to a temporary
// file in the same folder, which is synced and renamed over the target.
package atomicfile
