package kubetest

import (
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// writeKubeconfig writes a kubeconfig with one cluster, user and context
// (current, namespace Namespace), as kubectl would read it.
func writeKubeconfig(path, server, ca, token string) error {
	c := clientcmdapi.NewConfig()
	c.Clusters["kubetest"] = &clientcmdapi.Cluster{Server: server, CertificateAuthority: ca}
	c.AuthInfos["kubetest"] = &clientcmdapi.AuthInfo{Token: token}
	c.Contexts["kubetest"] = &clientcmdapi.Context{Cluster: "kubetest", AuthInfo: "kubetest", Namespace: Namespace}
	c.CurrentContext = "kubetest"
	return clientcmd.WriteToFile(*c, path)
}

func newClientset(c *rest.Config) (*kubernetes.Clientset, error) { return kubernetes.NewForConfig(c) }
