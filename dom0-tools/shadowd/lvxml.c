/* lvxml.c - the operator's libvirt domain definition (lvxml.h). libxml2
 * parses it with network access and entity expansion off; only the root
 * <domain>, its type and its <name> are looked at here: libvirt validates
 * the rest when the domain is created. */
#define _GNU_SOURCE
#include "lvxml.h"

#include <errno.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PARSE_OPTS (XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING)

static void seterr(char *err, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void seterr(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
}

static xmlNodePtr child(xmlNodePtr n, const char *name)
{
    for (xmlNodePtr c = n ? n->children : NULL; c; c = c->next)
        if (c->type == XML_ELEMENT_NODE && !strcmp((const char *)c->name, name))
            return c;
    return NULL;
}

/* Parse path; on error a message "PATH:LINE: ..." in err. */
static xmlDocPtr parse(const char *path, char *err, size_t len)
{
    struct stat st;
    if (stat(path, &st) < 0) {
        seterr(err, len, "%s: %s", path, strerror(errno));
        return NULL;
    }
    if (!S_ISREG(st.st_mode) || st.st_size > (off_t)SD_LVXML_MAX) {
        seterr(err, len, "%s: not a regular file of at most %u bytes", path, SD_LVXML_MAX);
        return NULL;
    }
    xmlResetLastError();
    xmlDocPtr doc = xmlReadFile(path, NULL, PARSE_OPTS);
    if (!doc) {
        const xmlError *e = xmlGetLastError();
        seterr(err, len, "%s:%d: not well-formed XML: %s", path, e ? e->line : 0,
               e && e->message ? e->message : "?");
        if (strlen(err) && err[strlen(err) - 1] == '\n')
            err[strlen(err) - 1] = 0;
        return NULL;
    }
    return doc;
}

/* The root <domain> and its <name> node; a message otherwise. */
static int domain_name(const char *path, xmlDocPtr doc, xmlNodePtr *namenode, char *err, size_t len)
{
    xmlNodePtr root = xmlDocGetRootElement(doc);
    if (!root || strcmp((const char *)root->name, "domain")) {
        seterr(err, len, "%s:%ld: the root element is <%s>, not <domain>", path,
               root ? xmlGetLineNo(root) : 0L, root ? (const char *)root->name : "");
        return -1;
    }
    xmlChar *type = xmlGetProp(root, (const xmlChar *)"type");
    if (!type || !type[0]) {
        xmlFree(type);
        seterr(err, len, "%s:%ld: <domain> has no type= (xen, kvm, test, ...)", path,
               xmlGetLineNo(root));
        return -1;
    }
    xmlFree(type);
    xmlNodePtr n = child(root, "name");
    if (!n) {
        seterr(err, len, "%s:%ld: <domain> has no <name>", path, xmlGetLineNo(root));
        return -1;
    }
    *namenode = n;
    return 0;
}

int sd_lvxml_check(const char *path, const char *name, FILE *err)
{
    char msg[512];
    xmlDocPtr doc = parse(path, msg, sizeof(msg));
    xmlNodePtr n;
    if (!doc || domain_name(path, doc, &n, msg, sizeof(msg)) < 0) {
        fprintf(err, "%s\n", msg);
        if (doc)
            xmlFreeDoc(doc);
        return -1;
    }
    int rc = 0;
    xmlChar *v = xmlNodeGetContent(n);
    if (!v || strcmp((const char *)v, name)) {
        fprintf(err, "%s:%ld: <name>%s</name>, but shadowd's config calls this domain '%s'\n", path,
                xmlGetLineNo(n), v ? (const char *)v : "", name);
        rc = -1;
    }
    xmlFree(v);
    xmlFreeDoc(doc);
    return rc;
}

char *sd_lvxml_load(const char *path, const char *as_name, char *err, size_t errlen)
{
    xmlDocPtr doc = parse(path, err, errlen);
    xmlNodePtr n;
    if (!doc)
        return NULL;
    if (domain_name(path, doc, &n, err, errlen) < 0) {
        xmlFreeDoc(doc);
        return NULL;
    }
    xmlChar *v = xmlNodeGetContent(n);
    if (!v || strcmp((const char *)v, as_name)) {
        xmlNodeSetContent(n, (const xmlChar *)as_name);
        xmlNodePtr u = child(xmlDocGetRootElement(doc), "uuid");
        if (u) {
            xmlUnlinkNode(u);
            xmlFreeNode(u);
        }
    }
    xmlFree(v);
    xmlChar *buf = NULL;
    int size = 0;
    xmlDocDumpMemory(doc, &buf, &size);
    xmlFreeDoc(doc);
    char *s = buf ? strndup((const char *)buf, (size_t)size) : NULL;
    xmlFree(buf);
    if (!s)
        seterr(err, errlen, "%s: out of memory", path);
    return s;
}
