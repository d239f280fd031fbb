import { createRouter, createWebHistory } from 'vue-router'
import HomeView from '../views/HomeView.vue'

// History mode: each view has its own path (/about), which the published site serves as
// prerendered HTML; any other path gets the app's index.html and the router takes over.
export default createRouter({
  history: createWebHistory(),
  routes: [
    { path: '/', name: 'home', component: HomeView },
    { path: '/about', name: 'about', component: () => import('../views/AboutView.vue') },
  ],
})
