import { createApp } from 'vue'
import App from './App.vue'
import router from './router'

const app = createApp(App).use(router)
// Mounted once the first route (and its lazy view) is ready: the page's prerendered HTML
// stays until the same view replaces it, with nothing in between.
router.isReady().then(() => app.mount('#app'))
