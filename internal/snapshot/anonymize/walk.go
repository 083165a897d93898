package anonymize

// Helpers over the maps of an unstructured object. Each does nothing
// where the field is absent or not of the expected type: unknown and
// malformed content is left as it is.

type object = map[string]any

// child is the map at path below m, or nil.
func child(m object, path ...string) object {
	for _, k := range path {
		next, ok := m[k].(map[string]any)
		if !ok {
			return nil
		}
		m = next
	}
	return m
}

// items are the maps in the list at path below m.
func items(m object, path ...string) []object {
	parent := child(m, path[:len(path)-1]...)
	list, _ := parent[path[len(path)-1]].([]any)
	out := make([]object, 0, len(list))
	for _, v := range list {
		if o, ok := v.(map[string]any); ok {
			out = append(out, o)
		}
	}
	return out
}

// setString replaces the string at m[key] by f of it.
func setString(m object, key string, f func(string) string) {
	if s, ok := m[key].(string); ok {
		m[key] = f(s)
	}
}

// setStrings replaces each string in the list at m[key] by f of it.
func setStrings(m object, key string, f func(string) string) {
	list, _ := m[key].([]any)
	for i, v := range list {
		if s, ok := v.(string); ok {
			list[i] = f(s)
		}
	}
}

// setValues replaces each string value of the map at m[key] by f of its
// key and value (labels, annotations, selectors).
func setValues(m object, key string, f func(k, v string) string) {
	values := child(m, key)
	for k, v := range values {
		if s, ok := v.(string); ok {
			values[k] = f(k, s)
		}
	}
}
