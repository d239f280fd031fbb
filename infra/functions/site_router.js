import cf from 'cloudfront';

// Viewer-request router (cloudfront-js-2.0). A public key is a pointer in the associated
// KeyValueStore: "site:{deployKey}" or "preview:{previewKey}" -> "{appId}/{buildId}".
// The request is rewritten to the immutable build output, builds/{appId}/{buildId}/...,
// so publishing or rolling back is one KVS write and never touches the bucket.
//
// With a sites domain (written in at synth from the context value sitesDomain), the key is
// the Host's first label, so each preview and site is its own origin: "{deployKey}.{domain}"
// a site, "p-{previewKey}.{domain}" a preview; any other Host (the distribution's own
// domain included) gets nothing. Without one, every app shares the distribution's domain:
// "/sites/{deployKey}/..." and "/preview/{previewKey}/...".
//
// With edge routing (written in at synth: the Lambda@Edge router is deployed), a key the
// store does not hold is not a 404 here: the request goes on as
// "/_edge/{site|preview}/{key}/{file}" and the origin-request function
// (functions/edge_router/router.py) resolves it from the DynamoDB pointer table.
const kvs = cf.kvs();
const SITES_DOMAIN = '';
const EDGE_ROUTING = false;

const ROUTE = /^\/(sites|preview)\/([^\/]+)(\/.*)?$/;
const PUBLIC_KEY = /^[A-Za-z0-9_-]{8,64}$/;
const ID = /^[A-Za-z0-9_-]{1,64}$/;
const NAMESPACE = { sites: 'site:', preview: 'preview:' };
const LABEL = /^(p-)?([a-z0-9]{8,61})$/;
// A deploy whose Vue routes were prerendered (issue 44) has "routes:{appId}/{buildId}" in the
// store: its routes, space-separated, without the leading "/". A listed route is served its
// own page, {route}/index.html; any other route gets the app's page as built, SHELL.
const ROUTES = 'routes:';
const SHELL = '.shell.html';

function notFound() {
    // A plain-string body is the documented shortcut for {encoding: 'text', data: ...}.
    return {
        statusCode: 404,
        statusDescription: 'Not Found',
        headers: { 'content-type': { value: 'text/plain' } },
        body: 'not found',
    };
}

// True when rest could climb out of the build, smuggle a separator past this check or reach
// the reserved "_api/": judged on the percent-decoded path, so %2e%2e, %2f, %5c and %5F count
// like their characters.
function unsafe(rest) {
    let decoded;
    try {
        decoded = decodeURIComponent(rest);
    } catch (e) {
        return true; // malformed percent-encoding
    }
    if (decoded.indexOf('\\') !== -1) return true;
    const segments = decoded.split('/');
    // "_api/" is the platform's data API (the distribution's /_api/* behavior): an app's own
    // files there are never served, however the path is spelled.
    if (segments[0] === '_api') return true;
    for (let i = 0; i < segments.length; i++) {
        const s = segments[i];
        if (s === '.' || s === '..') return true;
        if (s === '' && i < segments.length - 1) return true; // "//" (a trailing "/" is fine)
    }
    return false;
}

// The pointer a Host names under SITES_DOMAIN (host names ignore case; a port is ignored).
function hostPointer(request) {
    const header = request.headers.host;
    const host = header && header.value ? String(header.value).toLowerCase().split(':')[0] : '';
    const suffix = `.${SITES_DOMAIN}`;
    if (host.length <= suffix.length || host.slice(-suffix.length) !== suffix) return null;
    const m = LABEL.exec(host.slice(0, -suffix.length));
    if (!m) return null;
    return (m[1] ? 'preview:' : 'site:') + m[2];
}

async function handler(event) {
    const request = event.request;
    let pointer, rest;
    if (SITES_DOMAIN) {
        pointer = hostPointer(request);
        if (!pointer || request.uri.charAt(0) !== '/') return notFound();
        rest = request.uri.slice(1);
    } else {
        const m = ROUTE.exec(request.uri);
        if (!m || !PUBLIC_KEY.test(m[2])) return notFound();
        if (m[3] === undefined) {
            // "/sites/key" -> "/sites/key/" so relative asset URLs resolve inside the site.
            // The query string is dropped: rebuilding it from request.querystring is not
            // worth it.
            return {
                statusCode: 301,
                statusDescription: 'Moved Permanently',
                headers: { location: { value: `${request.uri}/` } },
            };
        }
        pointer = NAMESPACE[m[1]] + m[2];
        rest = m[3].slice(1);
    }
    if (unsafe(rest)) return notFound();

    const last = rest.slice(rest.lastIndexOf('/') + 1);
    let path;
    let route = null;
    if (last === '') path = `${rest}index.html`; // a directory
    else if (last.indexOf('.') === -1) {
        path = 'index.html'; // an SPA route (its own page, if the build prerendered it)
        route = rest;
    } else path = rest; // a file

    let value;
    try {
        value = await kvs.get(pointer);
    } catch (e) {
        // Not in the store. With edge routing the store is the hot set and the pointer
        // table the truth: the origin-request function looks the key up there.
        if (!EDGE_ROUTING) return notFound();
        const colon = pointer.indexOf(':');
        // A route goes as "_api/route/{route}" (no file's path: "_api/" is refused above):
        // the edge router knows the build, so it picks the route's page, the shell or
        // index.html, as routed() does here.
        const sent = route !== null ? `_api/route/${route}` : path;
        request.uri = `/_edge/${pointer.slice(0, colon)}/${pointer.slice(colon + 1)}/${sent}`;
        return request;
    }
    const parts = String(value).split('/');
    if (parts.length !== 2 || !ID.test(parts[0]) || !ID.test(parts[1])) return notFound();
    if (route !== null) path = await routed(`${parts[0]}/${parts[1]}`, route);
    request.uri = `/builds/${parts[0]}/${parts[1]}/${path}`;
    return request;
}

// The file for an SPA route of the build: its prerendered page, the shell, or (a build with
// no routes key: a preview, an html site, one built before prerendering) index.html.
async function routed(build, route) {
    let listed;
    try {
        listed = await kvs.get(ROUTES + build);
    } catch (e) {
        return 'index.html';
    }
    let name;
    try {
        name = decodeURIComponent(route); // the store lists names as the files are named
    } catch (e) {
        return SHELL;
    }
    return String(listed).split(' ').indexOf(name) !== -1 ? `${route}/index.html` : SHELL;
}
