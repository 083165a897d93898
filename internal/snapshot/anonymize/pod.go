package anonymize

// podTemplate maps a pod template: the pods a controller makes from it
// are mapped the same way, so its selector keeps selecting them.
func (a *Anonymizer) podTemplate(t object) {
	a.meta(child(t, "metadata"))
	a.podSpec(child(t, "spec"))
}

func (a *Anonymizer) podSpec(spec object) {
	if spec == nil {
		return
	}
	for _, key := range []string{"nodeName", "serviceAccountName", "serviceAccount", "priorityClassName",
		"runtimeClassName", "schedulerName", "hostname", "subdomain"} {
		setString(spec, key, a.str)
	}
	setValues(spec, "nodeSelector", a.value)
	a.tolerations(spec)
	a.affinity(child(spec, "affinity"))
	for _, c := range items(spec, "topologySpreadConstraints") {
		a.labelSelector(child(c, "labelSelector"))
	}
	for _, key := range []string{"containers", "initContainers", "ephemeralContainers"} {
		for _, c := range items(spec, key) {
			a.container(c)
		}
	}
	for _, v := range items(spec, "volumes") {
		a.volume(v)
	}
	a.names(spec, "imagePullSecrets")
	for _, c := range items(spec, "resourceClaims") {
		setString(c, "resourceClaimName", a.str)
		setString(c, "resourceClaimTemplateName", a.str)
	}
	for _, h := range items(spec, "hostAliases") {
		setStrings(h, "hostnames", a.str)
	}
	setStrings(child(spec, "dnsConfig"), "searches", a.str)
}

// container maps a container's name and image. Its environment, command
// and arguments are dropped, as the snapshot format does: they are where
// a workload's secrets and hostnames live, and a simulated kubelet runs
// nothing.
func (a *Anonymizer) container(c object) {
	setString(c, "name", a.str)
	setString(c, "targetContainerName", a.str)
	setString(c, "image", a.image)
	for _, key := range []string{"volumeMounts", "volumeDevices"} {
		for _, m := range items(c, key) {
			setString(m, "name", a.str)
			setString(m, "mountPath", a.str) // a path stays an absolute path
			setString(m, "devicePath", a.str)
		}
	}
	for _, key := range []string{"env", "envFrom", "command", "args"} {
		delete(c, key)
	}
}

func (a *Anonymizer) affinity(aff object) {
	node := child(aff, "nodeAffinity")
	a.nodeSelector(child(node, "requiredDuringSchedulingIgnoredDuringExecution"))
	for _, p := range items(node, "preferredDuringSchedulingIgnoredDuringExecution") {
		a.nodeSelectorTerm(child(p, "preference"))
	}
	for _, kind := range []string{"podAffinity", "podAntiAffinity"} {
		terms := child(aff, kind)
		for _, t := range items(terms, "requiredDuringSchedulingIgnoredDuringExecution") {
			a.podAffinityTerm(t)
		}
		for _, p := range items(terms, "preferredDuringSchedulingIgnoredDuringExecution") {
			a.podAffinityTerm(child(p, "podAffinityTerm"))
		}
	}
}

func (a *Anonymizer) podAffinityTerm(t object) {
	a.labelSelector(child(t, "labelSelector"))
	a.labelSelector(child(t, "namespaceSelector"))
	setStrings(t, "namespaces", a.str)
}

// volume maps a pod volume's name (as its mounts are; a StatefulSet's
// claim template names its pods' volume) and what it names: claims,
// ConfigMaps, Secrets, images, hosts and paths.
func (a *Anonymizer) volume(v object) {
	setString(v, "name", a.str)
	setString(child(v, "persistentVolumeClaim"), "claimName", a.str)
	setString(child(v, "configMap"), "name", a.str)
	setString(child(v, "secret"), "secretName", a.str)
	for _, s := range items(v, "projected", "sources") {
		setString(child(s, "configMap"), "name", a.str)
		setString(child(s, "secret"), "name", a.str)
	}
	if csi := child(v, "csi"); csi != nil {
		setValues(csi, "volumeAttributes", func(_, s string) string { return a.str(s) })
		setString(child(csi, "nodePublishSecretRef"), "name", a.str)
	}
	if t := child(v, "ephemeral", "volumeClaimTemplate"); t != nil {
		a.meta(child(t, "metadata"))
		a.claimSpec(child(t, "spec"))
	}
	setString(child(v, "image"), "reference", a.image)
	setString(child(v, "hostPath"), "path", a.str)
	setString(child(v, "nfs"), "server", a.str)
	setString(child(v, "nfs"), "path", a.str)
}
