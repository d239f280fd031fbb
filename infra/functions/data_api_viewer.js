// Viewer-request function of the sites distribution's /_api/* behavior (cloudfront-js-2.0).
// The data API's function is reached through its function URL, so CloudFront sends it that
// URL's host, not the viewer's; this hands the viewer's Host on in x-zerocode-host, over
// anything the viewer sent under that name. The function believes it only beside the origin
// secret CloudFront adds (zerocode/entrypoints/lambda_data_api.py).
async function handler(event) {
    const request = event.request;
    const host = request.headers.host && request.headers.host.value;
    request.headers['x-zerocode-host'] = { value: host ? String(host) : '' };
    return request;
}
